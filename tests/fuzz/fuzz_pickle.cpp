// The pickle machine alone: any byte string decodes or is refused with an offset.
#include "fuzz_target.hpp"

#include <memsnap/pickle/reader.hpp>

void memsnap::fuzz::run_one(std::string_view input) {
    pickle::Document doc(input);
    pickle::decode(doc, pickle::Limits{}, nullptr);
}
