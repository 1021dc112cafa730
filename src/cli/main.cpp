#include "app.hpp"
#include "process.hpp"

int main(int argc, char** argv) {
    memsnap::cli::relaunch_on_huge_pages(argv);
    return memsnap::cli::run(argc, argv);
}
