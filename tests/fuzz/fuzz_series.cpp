// `trend` and `ranks` over several captures. The input is "memsnap-series N1 N2 ...\n" and
// then the captures' bytes one after another (the last takes what is left); any other input
// is one capture taken three times. Seeds carry sizes near 2^62 and 2^63 (memsnap.dict).
#include "fuzz_target.hpp"

#include <memsnap/analysis/run.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/report/render.hpp>

#include <charconv>
#include <map>
#include <vector>

namespace {

constexpr std::string_view kHeader = "memsnap-series ";

std::vector<std::string_view> split(std::string_view input) {
    if (!input.starts_with(kHeader)) return {input, input, input};
    const auto end = input.find('\n');
    if (end == std::string_view::npos) return {input, input, input};
    std::vector<std::string_view> parts;
    auto sizes = input.substr(kHeader.size(), end - kHeader.size());
    auto rest = input.substr(end + 1);
    while (!sizes.empty() && parts.size() < 7) {
        std::size_t n = 0;
        const auto [ptr, ec] = std::from_chars(sizes.data(), sizes.data() + sizes.size(), n);
        if (ec != std::errc() || n > rest.size()) break;
        parts.push_back(rest.substr(0, n));
        rest.remove_prefix(n);
        sizes.remove_prefix(static_cast<std::size_t>(ptr - sizes.data()));
        if (!sizes.empty()) sizes.remove_prefix(1);  // the space
    }
    parts.push_back(rest);
    return parts;
}

}  // namespace

void memsnap::fuzz::run_one(std::string_view input) {
    std::map<std::string, capture::Capture> captures;
    analysis::Request request;
    const auto parts = split(input);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const auto name = "step" + std::to_string(100 * (i + 1)) + (i % 2 ? ".txt" : ".pickle");
        captures.emplace(name, capture::capture_from_bytes(parts[i], name, {}));
        request.names.push_back(name);
    }
    request.load = [&](const capture::InputName& name) { return captures.at(name.path); };
    request.options.top = 0;
    request.gates.growth_per_step = 1;
    request.gates.leak = true;
    for (const auto command : {analysis::Command::trend, analysis::Command::ranks})
        for (const auto format : {report::Format::text, report::Format::json, report::Format::svg}) {
            request.command = command;
            request.stacks_for = [format](analysis::Command c) { return report::stack_need(c, format, {}); };
            try {
                const auto result = analysis::run(request);
                report::write(result, format, {}, [](std::string_view) {});
            } catch (const memsnap::Error& e) {
                if (e.kind() != memsnap::ErrorKind::usage) throw;  // ranks of captures that are no ranks
            }
        }
}
