// Text writers for snapshots: `info` and `diff`, for a terminal.
#include "format.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <cstdlib>

namespace memsnap::report::detail {

namespace {

using analysis::Category;

std::string join_counts(const std::map<std::string, std::int64_t>& counts) {
    std::string out;
    for (const auto& [name, n] : counts)
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", util::printable(name), n);
    return out.empty() ? "none" : out;
}

void memory_line(std::string& out, const char* label, std::int64_t bytes, const char* note = "") {
    out += fmt::format("  {:<24}{:>12}  {:>16} B{}\n", label, util::human_bytes(bytes), bytes, note);
}

std::string devices_line(const analysis::SnapshotInfo& s) {
    std::vector<int> ids;
    for (const auto& d : s.devices) ids.push_back(d.device);
    if (s.device) return fmt::format("cuda:{} (--device)", *s.device);
    if (ids.empty()) return "none";
    std::string names;
    for (int d : ids) names += fmt::format("{}cuda:{}", names.empty() ? "" : ", ", d);
    return fmt::format("{} ({})", ids.size(), names);
}

void info_header(std::string& out, const analysis::SnapshotInfo& s) {
    out += fmt::format("{}\n", util::printable(s.file));
    if (s.encoding == "pickle")
        out += fmt::format("  format      {}, pickle protocol {}\n", s.writer, s.protocol);
    else
        out += fmt::format("  format      {}\n", s.writer);
    out += fmt::format("  generation  {}\n", s.generation);
    out += fmt::format("  devices     {}\n", devices_line(s));
    out += fmt::format("  segments    {} (large {}, small {}, expandable {}, private pool {})\n", s.totals.segments,
                       s.large_segments, s.small_segments, s.expandable_segments, s.private_pool_segments);
    out += fmt::format("  blocks      {}: {}\n", s.totals.blocks, join_counts(s.blocks_by_state));
    out +=
        fmt::format("  stacks      {} of {} blocks carry an allocation stack\n", s.blocks_with_frames, s.totals.blocks);
}

void info_memory(std::string& out, const analysis::SnapshotInfo& s) {
    out += "\nMemory\n";
    const auto& t = s.totals;
    memory_line(out, "reserved", t.reserved_bytes);
    memory_line(out, "allocated", t.allocated_bytes);
    memory_line(out, "active", t.active_bytes);
    memory_line(out, "requested", t.requested_bytes);
    memory_line(out, "inactive (cached)", t.inactive_bytes);
    memory_line(out, "internal waste", t.internal_waste_bytes, "  size - requested of live blocks");
    memory_line(out, "inactive split", t.inactive_split_bytes,
                "  free blocks in segments that hold live blocks (non-releasable)");
    memory_line(out, "releasable cache", t.releasable_bytes, "  whole free segments (empty_cache)");
    if (s.devices.size() > 1) {
        out += "\nPer device\n";
        for (const auto& d : s.devices)
            out += fmt::format("  device {:<3} reserved {:>12}  allocated {:>12}  segments {}\n", d.device,
                               util::human_bytes(d.totals.reserved_bytes), util::human_bytes(d.totals.allocated_bytes),
                               d.totals.segments);
    }
    if (!s.pools.empty()) {
        out += fmt::format("\nPools (largest free block of all: {})\n", util::human_bytes(s.largest_free_block_bytes));
        for (const auto& p : s.pools)
            out += fmt::format(
                "  cuda:{} stream {} {}: {} segment{}{}, reserved {}, allocated {}, free {}, largest free "
                "block {}\n",
                p.device, p.stream,
                p.is_private() ? fmt::format("private pool ({}, {})", p.pool_id[0], p.pool_id[1])
                               : std::string("default pool"),
                p.segments, p.segments == 1 ? "" : "s",
                p.expandable_segments ? fmt::format(" ({} expandable)", p.expandable_segments) : "",
                util::human_bytes(p.reserved_bytes), util::human_bytes(p.allocated_bytes),
                util::human_bytes(p.free_bytes), util::human_bytes(p.largest_free_block_bytes));
    }
    out += "\nCategories of live memory\n";
    bool any = false;
    for (const auto c : analysis::all_categories()) {
        const auto& u = s.categories[static_cast<std::size_t>(c)];
        if (u.blocks == 0) continue;
        any = true;
        out += fmt::format("  {:<24}{:>12}  {:>6} block{}\n", analysis::to_string(c), util::human_bytes(u.bytes),
                           u.blocks, u.blocks == 1 ? "" : "s");
    }
    if (!any) out += "  no live blocks\n";
}

void info_trace(std::string& out, const analysis::SnapshotInfo& s) {
    std::int64_t events = 0;
    for (const auto& [name, n] : s.trace_events_by_action) events += n;
    out += fmt::format("\nTrace: {} event{} in {} device trace{}", events, events == 1 ? "" : "s", s.trace_devices,
                       s.trace_devices == 1 ? "" : "s");
    if (s.trace_first_us && s.trace_last_us)
        out += fmt::format(", spanning {:.3f} s", static_cast<double>(*s.trace_last_us - *s.trace_first_us) / 1e6);
    out += "\n";
    if (events > 0) out += fmt::format("  {}\n", join_counts(s.trace_events_by_action));
    if (s.oom_events > 0)
        out += fmt::format("  {} out-of-memory event{} recorded\n", s.oom_events, s.oom_events == 1 ? "" : "s");
    if (s.has_allocator_settings) {
        out += "\nAllocator settings\n";
        for (const auto& [key, value] : s.allocator_settings)
            out += fmt::format("  {:<34}{}\n", util::printable(key), util::printable(value));
    }
    if (s.annotations > 0) out += fmt::format("\nExternal annotations: {}\n", s.annotations);
}

void info_sites(std::string& out, const analysis::SnapshotInfo& s) {
    out += fmt::format("\nTop allocation sites by live bytes ({} site{} in all)\n", s.site_count,
                       s.site_count == 1 ? "" : "s");
    if (s.top_sites.empty()) out += "  no live blocks\n";
    for (std::size_t i = 0; i < s.top_sites.size(); ++i) {
        const auto& site = s.top_sites[i];
        out += fmt::format("  {:>2}. {:>12} {:>6} block{}  {:<15}  {}{}\n", i + 1, util::human_bytes(site.bytes),
                           site.blocks, site.blocks == 1 ? " " : "s", analysis::to_string(site.category),
                           site_label(site.site),
                           site.site.user_code || site.site.filename.empty() ? "" : "  (no user frame)");
    }
}

}  // namespace

std::string snapshot_info_text(const analysis::SnapshotInfo& s, const RenderOptions& options) {
    std::string out;
    info_header(out, s);
    if (!s.warnings.empty()) {
        out += "\nWarnings\n";
        for (const auto& w : s.warnings) out += fmt::format("  - {}\n", util::printable(w));
    }
    info_memory(out, s);
    info_trace(out, s);
    const Style style{options.color};
    for (const auto& o : s.ooms.ooms)
        oom_text(out, o, style,
                 fmt::format("on device {}{}", o.device,
                             s.trace_first_us && o.time_us >= 0
                                 ? fmt::format(", {:.3f} s into the trace",
                                               static_cast<double>(o.time_us - *s.trace_first_us) / 1e6)
                                 : ""));
    if (s.ooms.ooms_total > s.ooms.ooms.size())
        out += fmt::format("\n{} more out-of-memory events, not explained (the first {} are)\n",
                           s.ooms.ooms_total - s.ooms.ooms.size(), s.ooms.ooms.size());
    info_sites(out, s);
    return out;
}

}  // namespace memsnap::report::detail
