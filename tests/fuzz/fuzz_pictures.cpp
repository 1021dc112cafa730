// Every picture writer (svg, html, dot, pprof, folded) over `info` of a capture and over its
// diff with itself, each side: the writers that budget boxes, escape names and draw shrinkage.
#include "fuzz_target.hpp"

#include <memsnap/analysis/run.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/report/render.hpp>

namespace {

using memsnap::report::Format;

void draw(const memsnap::analysis::Request& request, std::initializer_list<Format> formats,
          const memsnap::report::RenderOptions& options) {
    for (const auto format : formats) {
        auto r = request;
        r.stacks_for = [&](memsnap::analysis::Command c) { return memsnap::report::stack_need(c, format, options); };
        try {
            const auto result = memsnap::analysis::run(r);
            memsnap::report::write(result, format, options, [](std::string_view) {});
        } catch (const memsnap::Error& e) {
            if (e.kind() != memsnap::ErrorKind::usage) throw;  // a picture of summaries
        }
    }
}

}  // namespace

void memsnap::fuzz::run_one(std::string_view input) {
    const auto capture = capture::capture_from_bytes(input, "step100.pickle", {});
    analysis::Request request;
    request.load = [&](const capture::InputName&) { return capture; };
    request.options.top = 0;
    request.command = analysis::Command::info;
    request.names = {"step100.pickle"};
    draw(request, {Format::svg, Format::html, Format::dot, Format::pprof, Format::folded}, {});
    request.command = analysis::Command::diff;
    request.names = {"step100.pickle", "step500.pickle"};
    for (const auto side : {analysis::Side::delta, analysis::Side::before, analysis::Side::after}) {
        report::RenderOptions options;
        options.side = side;
        draw(request, {Format::svg, Format::html, Format::dot, Format::pprof, Format::folded}, options);
    }
}
