#include "app.hpp"

int main(int argc, char** argv) { return memsnap::cli::run(argc, argv); }
