// `diff` of two small captures of any kind, in every format. The input is
// "memsnap-diff N\n" followed by the first capture's N bytes and then the second's; any
// other input is diffed with itself (so every fixture is a seed as it is).
#include "fuzz_target.hpp"

#include <memsnap/analysis/gates.hpp>
#include <memsnap/analysis/run.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/util/steps.hpp>

#include <charconv>

namespace {

constexpr std::string_view kHeader = "memsnap-diff ";

std::pair<std::string_view, std::string_view> split(std::string_view input) {
    if (!input.starts_with(kHeader)) return {input, input};
    const auto end = input.find('\n');
    if (end == std::string_view::npos) return {input, input};
    std::size_t n = 0;
    const auto digits = input.substr(kHeader.size(), end - kHeader.size());
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    const auto rest = input.substr(end + 1);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || n > rest.size()) return {input, input};
    return {rest.substr(0, n), rest.substr(n)};
}

}  // namespace

void memsnap::fuzz::run_one(std::string_view input) {
    const auto [first, second] = split(input);
    const auto before = capture::capture_from_bytes(first, "step100.pickle", {});
    const auto after = capture::capture_from_bytes(second, "step500.pickle", {});
    analysis::AnalysisOptions options;
    options.top = 0;
    options.steps = util::resolve_steps("", "step100.pickle", "step500.pickle");
    const auto result = analysis::diff(before, after, options);
    analysis::Gates gates;
    gates.growth_per_step = 1;
    gates.leak = true;
    (void)analysis::check_gates(result, gates);
    for (const auto format : {report::Format::text, report::Format::json, report::Format::markdown, report::Format::csv,
                              report::Format::folded}) {
        try {
            (void)report::render(result, format, {});
        } catch (const memsnap::Error& e) {
            if (e.kind() != memsnap::ErrorKind::usage) throw;  // folded of two summaries
        }
    }
}
