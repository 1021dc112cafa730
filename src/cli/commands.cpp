#include "commands.hpp"

#include <memsnap/analysis/summary.hpp>
#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>
#include <memsnap/report/snapshot_info.hpp>
#include <memsnap/snapshot/load.hpp>

#include <unistd.h>

#include <cstdlib>

namespace memsnap::cli {

bool use_color(const GlobalOptions& globals) {
    if (globals.color == "never") return false;
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color != nullptr && *no_color != '\0') return false;
    if (globals.color == "always") return true;
    return ::isatty(STDOUT_FILENO) == 1;
}

CommandOutput run_info(const InfoOptions& options, const GlobalOptions& globals) {
    const io::MappedFile file(options.file);
    snapshot::LoadOptions load;
    load.limits = globals.limits;
    const auto snap = snapshot::load_snapshot_bytes(file.bytes(), options.file, load);
    const auto summary = analysis::summarize(snap, globals.rules, options.top);
    CommandOutput out;
    out.text = options.format == "json" ? report::render_snapshot_info_json(summary)
                                        : report::render_snapshot_info_text(summary);
    return out;
}

CommandOutput run_diff(const DiffOptions&, const GlobalOptions&) {
    throw usage_error("diff is not available yet");
}

}  // namespace memsnap::cli
