// The document of `info` on a snapshot ("kind": "snapshot"). Its top-level totals keep the
// names expected.json uses.
#include "common.hpp"
#include "documents.hpp"
#include "phrases.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace memsnap::report::doc {

namespace {

using analysis::SnapshotInfo;

std::string join_counts(const std::map<std::string, std::int64_t>& counts) {
    std::string out;
    for (const auto& [name, n] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, n);
    return out.empty() ? "none" : out;
}

std::string devices_text(const SnapshotInfo& s) {
    if (s.device) return fmt::format("cuda:{} (--device)", *s.device);
    if (s.devices.empty()) return "none";
    std::string names;
    for (const auto& d : s.devices) names += fmt::format("{}cuda:{}", names.empty() ? "" : ", ", d.device);
    return fmt::format("{} ({})", s.devices.size(), names);
}

void add_header(Node& root, const SnapshotInfo& s) {
    root.add("file", Value::text_of(std::filesystem::path(s.file).filename().string())).machines_only();
    root.add("path", Value::text_of(s.file)).machines_only();
    root.add("format_text",
             Value::text_of(s.encoding == "pickle" ? fmt::format("{}, pickle protocol {}", s.writer, s.protocol)
                                                   : s.writer),
             "format")
        .people_only();
    auto& format = root.add(Node::object("format", Layout::hidden));
    format.add("encoding", Value::word(s.encoding));
    format.add("writer", Value::text_of(s.writer));
    format.add("protocol", Value::count(s.protocol));
    format.add("generation", Value::text_of(s.generation));
    format.add(sentences("features", s.features));
    root.add("generation", Value::text_of(s.generation)).people_only();
    root.add("devices_text", Value::text_of(devices_text(s)), "devices").people_only();
    root.add("device", Value::optional<int>(s.device, [](int v) { return Value::count(v); })).machines_only();
    root.add("segments_text",
             Value::text_of(fmt::format("{} (large {}, small {}, expandable {}, private pool {})", s.totals.segments,
                                        s.large_segments, s.small_segments, s.expandable_segments,
                                        s.private_pool_segments)),
             "segments")
        .people_only();
    root.add("blocks_text", Value::text_of(fmt::format("{}: {}", s.totals.blocks, join_counts(s.blocks_by_state))),
             "blocks")
        .people_only();
    root.add("stacks_text",
             Value::text_of(
                 fmt::format("{} of {} blocks carry an allocation stack", s.blocks_with_frames, s.totals.blocks)),
             "stacks")
        .people_only();
}

void add_totals(Node& parent, const analysis::MemoryTotals& t, bool with_notes) {
    parent.add("segments", Value::count(t.segments)).machines_only();
    parent.add("blocks", Value::count(t.blocks)).machines_only();
    parent.add("reserved_bytes", Value::bytes(t.reserved_bytes), "reserved");
    parent.add("allocated_bytes", Value::bytes(t.allocated_bytes), "allocated");
    parent.add("active_bytes", Value::bytes(t.active_bytes), "active");
    parent.add("inactive_bytes", Value::bytes(t.inactive_bytes), "inactive (cached)");
    parent.add("requested_bytes", Value::bytes(t.requested_bytes), "requested");
    // Notes are set as each node is added: a reference into parent's items does not outlive
    // the next add.
    const auto note = [with_notes](const char* text) { return with_notes ? std::string(text) : std::string(); };
    parent.add("internal_waste_bytes", Value::bytes(t.internal_waste_bytes), "internal waste")
        .with_note(note("size - requested of live blocks"));
    parent.add("inactive_split_bytes", Value::bytes(t.inactive_split_bytes), "inactive split")
        .with_note(note("free blocks in segments that hold live blocks (torch's inactive_split_bytes); those of "
                        "expandable segments are releasable too, the others are not"));
    parent.add("external_fragmentation_bytes", Value::bytes(t.inactive_split_bytes)).machines_only();  // earlier name
    parent.add("releasable_bytes", Value::bytes(t.releasable_bytes), "releasable cache")
        .with_note(note("what empty_cache() returns: whole free segments, free pages of expandable segments"));
    parent.add("non_releasable_bytes", Value::bytes(t.non_releasable_bytes), "non-releasable")
        .with_note(note("the rest of the cache: what empty_cache() keeps"));
    auto& pending = parent.add("pending_free_bytes", Value::bytes(t.pending_free_bytes), "pending free")
                        .with_note(note("freed, still in use on another stream: not allocated, not requested"));
    if (t.pending_free_bytes == 0) pending.machines_only();
}

Node device_row(const analysis::DeviceTotals& d) {
    auto row = Node::object("", Layout::facts);
    row.add("device", Value::count(d.device));
    add_totals(row, d.totals, false);
    for (auto& field : row.items)
        if (field.key != "device" && field.key != "reserved_bytes" && field.key != "allocated_bytes")
            field.machines_only();
    row.add("segments_shown", Value::count(d.totals.segments), "segments").people_only();
    return row;
}

void add_memory(Node& root, const SnapshotInfo& s) {
    auto& memory = root.add(Node::object("memory", Layout::section, "Memory"));
    memory.merge = true;
    add_totals(memory, s.totals, true);
    // The totals a query compares across captures (JSONL "total" records), named as summaries name them.
    auto& totals = root.add(Node::object("totals", Layout::hidden));
    totals.record = "total";
    totals.add("allocated_bytes", Value::bytes(s.totals.allocated_bytes));
    totals.add("reserved_bytes", Value::bytes(s.totals.reserved_bytes));
    totals.add("active_bytes", Value::bytes(s.totals.active_bytes));
    totals.add("requested_bytes", Value::bytes(s.totals.requested_bytes));
    totals.add("inactive_split_bytes", Value::bytes(s.totals.inactive_split_bytes));
    totals.add("releasable_bytes", Value::bytes(s.totals.releasable_bytes));
    auto& ids = root.add(Node::list("devices", Layout::hidden));
    for (const auto& d : s.devices) ids.add(Node::of("", Value::count(d.device)));
    auto& per_device = root.add(Node::list("per_device", Layout::table, "Per device"));
    if (s.devices.size() < 2) per_device.layout = Layout::hidden;
    // Rows are made as they are written: a capture may name tens of thousands of devices.
    per_device.count = s.devices.size();
    per_device.make = [&s](std::size_t i) { return device_row(s.devices[i]); };
}

// `pending_shown`: some pool holds blocks pending free, so people see the column that makes
// reserved = allocated + pending free + free add up.
Node pool_row(const analysis::PoolUsage& p, bool pending_shown) {
    auto row = Node::object("", Layout::facts);
    row.add("device", Value::count(p.device));
    row.add("stream", Value::count(p.stream));
    auto& id = row.add(Node::list("pool_id", Layout::hidden));
    id.add(Node::of("", Value::count(p.pool_id[0])));
    id.add(Node::of("", Value::count(p.pool_id[1])));
    row.add("pool",
            Value::text_of(p.is_private() ? fmt::format("private ({}, {})", p.pool_id[0], p.pool_id[1]) : "default"))
        .people_only();
    row.add("private", Value::flag(p.is_private())).machines_only();
    row.add("segments", Value::count(p.segments));
    row.add("expandable_segments", Value::count(p.expandable_segments), "expandable");
    row.add("reserved_bytes", Value::bytes(p.reserved_bytes), "reserved");
    row.add("allocated_bytes", Value::bytes(p.allocated_bytes), "allocated");
    auto& pending = row.add("pending_free_bytes", Value::bytes(p.pending_free_bytes), "pending free");
    if (!pending_shown) pending.machines_only();
    row.add("free_bytes", Value::bytes(p.free_bytes), "free");
    row.add("largest_free_block_bytes", Value::bytes(p.largest_free_block_bytes), "largest free block");
    return row;
}

void add_pools(Node& root, const SnapshotInfo& s) {
    root.add("largest_free_block_bytes", Value::bytes(s.largest_free_block_bytes), "largest free block")
        .machines_only();
    auto& pools = root.add(Node::list(
        "pools", Layout::table,
        fmt::format("Pools (largest free block of all: {})", util::human_bytes(s.largest_free_block_bytes))));
    pools.count = s.pools.size();
    const bool pending_shown = std::any_of(s.pools.begin(), s.pools.end(),
                                           [](const analysis::PoolUsage& p) { return p.pending_free_bytes != 0; });
    pools.make = [&s, pending_shown](std::size_t i) { return pool_row(s.pools[i], pending_shown); };
}

void add_categories(Node& root, const SnapshotInfo& s) {
    auto& categories = root.add(Node::list("categories", Layout::table, "Categories of live memory"));
    categories.keyed_by = "name";
    categories.note = "no live blocks";
    categories.record = "category";
    for (const auto c : analysis::all_categories()) {
        const auto& u = s.categories[static_cast<std::size_t>(c)];
        auto& row = categories.add(Node::object("", Layout::facts));
        row.add("name", Value::word(analysis::to_string(c)), "category");
        row.add("bytes", Value::bytes(u.bytes));
        row.add("blocks", Value::count(u.blocks));
        if (u.blocks == 0) row.machines_only();
    }
}

void add_trace(Node& root, const SnapshotInfo& s) {
    std::int64_t events = 0;
    for (const auto& [name, n] : s.trace_events_by_action) events += n;
    auto& trace = root.add(Node::object("trace", Layout::section, "Trace"));
    trace.merge = true;
    trace.add("events", Value::count(events)).people_only();
    trace.add("trace_devices", Value::count(static_cast<std::int64_t>(s.trace_devices)), "device traces");
    auto& actions = trace.add(Node::object("trace_events_by_action", Layout::line, "by action"));
    for (const auto& [name, n] : s.trace_events_by_action) actions.add(name, Value::count(n), name);
    actions.note = "none";
    trace.add("trace_events_with_stack", Value::count(s.trace_events_with_stack), "with a stack");
    if (s.trace_first_us && s.trace_last_us) {
        auto& span = trace.add(Node::object("trace_time_span_us", Layout::hidden));
        span.add("first", Value::count(*s.trace_first_us));
        span.add("last", Value::count(*s.trace_last_us));
        span.add("duration", Value::count(*s.trace_last_us - *s.trace_first_us));
        trace.add("span", Value::seconds(static_cast<double>(*s.trace_last_us - *s.trace_first_us) / 1e6))
            .people_only();
    } else {
        trace.add("trace_time_span_us", Value::none()).machines_only();
    }
    trace.add("oom_events", Value::count(s.oom_events), "out-of-memory events");
    trace.add("external_annotations", Value::count(s.annotations), "external annotations");
}

void add_settings(Node& root, const SnapshotInfo& s) {
    if (!s.has_allocator_settings) {
        root.add("allocator_settings", Value::none()).machines_only();
        return;
    }
    auto& settings = root.add(Node::object("allocator_settings", Layout::section, "Allocator settings"));
    for (const auto& [key, value] : s.allocator_settings) settings.add(key, Value::json(value), key);
}

void add_ooms(Node& root, const SnapshotInfo& s) {
    auto& ooms = root.add(Node::list("ooms", Layout::records, "Out-of-memory events"));
    if (s.ooms.ooms.empty()) ooms.layout = Layout::hidden;
    for (const auto& o : s.ooms.ooms) {
        const auto when = fmt::format(
            "on device {}{}", o.device,
            s.trace_first_us && o.time_us >= 0
                // From the first event of the traces read: --device N reads N's alone.
                ? fmt::format(", {:.3f} s {}", static_cast<double>(o.time_us - *s.trace_first_us) / 1e6,
                              s.device && s.trace_devices > 1
                                  ? fmt::format("after device {}'s first trace event", *s.device)
                              : s.trace_devices > 1 ? std::string("after the first trace event of any device")
                                                    : std::string("into the trace"))
                : "");
        ooms.add(oom(o, s.ooms.frame_table, when));
    }
    root.add("ooms_total", Value::count(static_cast<std::int64_t>(s.ooms.ooms_total)), "out-of-memory events in all")
        .machines_only();
}

void add_sites(Node& root, const SnapshotInfo& s) {
    root.add("site_count", Value::count(s.site_count)).machines_only();
    auto& sites = root.add(Node::list("top_sites", Layout::table,
                                      fmt::format("Top allocation sites by live bytes ({} site{} in all)", s.site_count,
                                                  s.site_count == 1 ? "" : "s")));
    sites.primary = true;
    sites.record = "site";
    sites.note = "no live blocks";
    const auto row_of = [](std::size_t i, const analysis::SiteUsage& u) {
        auto row = Node::object("", Layout::facts);
        row.add("rank", Value::count(static_cast<std::int64_t>(i + 1)), "#");
        row.add("bytes", Value::bytes(u.bytes));
        row.add("blocks", Value::count(u.blocks));
        row.add("category", Value::word(analysis::to_string(u.category)));
        add_site(row, u.site, false);
        return row;
    };
    sites.prototype = std::make_shared<const Node>(row_of(0, analysis::SiteUsage{}));  // CSV header of none
    for (std::size_t i = 0; i < s.top_sites.size(); ++i) sites.add(row_of(i, s.top_sites[i]));
}

}  // namespace

Document snapshot_info(const SnapshotInfo& s) {
    Document doc;
    doc.kind = "snapshot";
    doc.title = s.file;
    add_header(doc.root, s);
    doc.root.add(headline(s.headline));
    doc.root.add(sentences("warnings", s.warnings, "Warnings"));
    add_memory(doc.root, s);
    auto& by_state = doc.root.add(Node::object("blocks_by_state", Layout::hidden));
    for (const auto& [state, n] : s.blocks_by_state) by_state.add(state, Value::count(n));
    doc.root.add("blocks_with_frames", Value::count(s.blocks_with_frames)).machines_only();
    auto& types = doc.root.add(Node::object("segments_by_type", Layout::hidden));
    types.add("large", Value::count(s.large_segments));
    types.add("small", Value::count(s.small_segments));
    types.add("expandable", Value::count(s.expandable_segments));
    types.add("private_pool", Value::count(s.private_pool_segments));
    add_pools(doc.root, s);
    add_categories(doc.root, s);
    add_trace(doc.root, s);
    add_settings(doc.root, s);
    auto& keys = doc.root.add(Node::list("top_level_keys", Layout::hidden));
    for (const auto& k : s.top_level_keys) keys.add(Node::of("", Value::text_of(k)));
    add_ooms(doc.root, s);
    add_sites(doc.root, s);
    doc.jsonl_context = {"device"};
    return doc;
}

}  // namespace memsnap::report::doc
