#include <memsnap/report/snapshot_info.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

namespace memsnap::report {

namespace {

std::string join_counts(const std::map<std::string, std::int64_t>& counts) {
    std::string out;
    for (const auto& [name, n] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, n);
    return out.empty() ? "none" : out;
}

void memory_line(std::string& out, const char* label, std::int64_t bytes, const char* note = "") {
    out += fmt::format("  {:<24}{:>12}  {:>16} B{}\n", label, util::human_bytes(bytes), bytes, note);
}

}  // namespace

std::string render_snapshot_info_text(const analysis::SnapshotSummary& s) {
    std::string out;
    out += fmt::format("{}\n", s.file);
    if (s.encoding == "pickle")
        out += fmt::format("  format      {}, pickle protocol {}\n", s.writer, s.protocol);
    else
        out += fmt::format("  format      {}\n", s.writer);
    out += fmt::format("  generation  {}\n", s.generation);
    std::string devices;
    for (const auto& d : s.devices) devices += fmt::format("{}{}", devices.empty() ? "" : ", ", d.device);
    out += fmt::format("  devices     {}\n", devices.empty() ? "none" : devices);
    out += fmt::format("  segments    {} (large {}, small {}, expandable {}, private pool {})\n",
                       s.totals.segments, s.large_segments, s.small_segments, s.expandable_segments,
                       s.private_pool_segments);
    out += fmt::format("  blocks      {}: {}\n", s.totals.blocks, join_counts(s.blocks_by_state));
    out += fmt::format("  stacks      {} of {} blocks carry an allocation stack\n",
                       s.blocks_with_frames, s.totals.blocks);

    out += "\nMemory\n";
    const auto& t = s.totals;
    memory_line(out, "reserved", t.reserved_bytes);
    memory_line(out, "allocated", t.allocated_bytes);
    memory_line(out, "active", t.active_bytes);
    memory_line(out, "requested", t.requested_bytes);
    memory_line(out, "inactive (cached)", t.inactive_bytes);
    memory_line(out, "internal waste", t.internal_waste_bytes, "  size - requested of live blocks");
    memory_line(out, "external fragmentation", t.external_fragmentation_bytes,
                "  free blocks in segments that hold live blocks");
    memory_line(out, "releasable cache", t.releasable_bytes, "  whole free segments (empty_cache)");
    if (s.devices.size() > 1) {
        out += "\nPer device\n";
        for (const auto& d : s.devices)
            out += fmt::format("  device {:<3} reserved {:>12}  allocated {:>12}  segments {}\n",
                               d.device, util::human_bytes(d.totals.reserved_bytes),
                               util::human_bytes(d.totals.allocated_bytes), d.totals.segments);
    }

    std::int64_t events = 0;
    for (const auto& [name, n] : s.trace_events_by_action) events += n;
    out += fmt::format("\nTrace: {} event{} in {} device trace{}", events, events == 1 ? "" : "s",
                       s.trace_devices, s.trace_devices == 1 ? "" : "s");
    if (s.trace_first_us && s.trace_last_us)
        out += fmt::format(", spanning {:.3f} s", static_cast<double>(*s.trace_last_us - *s.trace_first_us) / 1e6);
    out += "\n";
    if (events > 0) out += fmt::format("  {}\n", join_counts(s.trace_events_by_action));
    if (s.oom_events > 0) out += fmt::format("  {} out-of-memory event(s) recorded\n", s.oom_events);

    if (s.has_allocator_settings) {
        out += "\nAllocator settings\n";
        for (const auto& [key, value] : s.allocator_settings)
            out += fmt::format("  {:<34}{}\n", key, value);
    }
    if (s.annotations > 0) out += fmt::format("\nExternal annotations: {}\n", s.annotations);

    out += fmt::format("\nTop allocation sites by live bytes ({} site{} in all)\n", s.site_count,
                       s.site_count == 1 ? "" : "s");
    if (s.top_sites.empty()) out += "  no live blocks\n";
    for (std::size_t i = 0; i < s.top_sites.size(); ++i) {
        const auto& site = s.top_sites[i];
        out += fmt::format("  {:>2}. {:>12} {:>6} block{}  {}{}\n", i + 1, util::human_bytes(site.bytes),
                           site.blocks, site.blocks == 1 ? " " : "s", site.site.label(),
                           site.site.user_code || site.site.filename.empty() ? "" : "  (no user frame)");
    }
    return out;
}

}  // namespace memsnap::report
