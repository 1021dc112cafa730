#include "main_script.hpp"

#include <memsnap/analysis/sites/live_blocks.hpp>
#include <memsnap/analysis/sites/snapshot_info.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/util/hash.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

namespace memsnap::analysis {

namespace {

// Counted by id, named once: a state or action name may be long, and repeated by memo.
void describe_segments(const snapshot::Snapshot& snap, std::optional<int> device, SnapshotContents& s) {
    std::map<snapshot::StringId, std::int64_t> by_state;
    for (const auto& seg : snap.segments) {
        if (device && seg.device != *device) continue;
        const auto type = snap.str(seg.segment_type);
        if (type == "large") ++s.large_segments;
        if (type == "small") ++s.small_segments;
        if (seg.is_expandable) ++s.expandable_segments;
        if (seg.pool_id[0] != 0 || seg.pool_id[1] != 0) ++s.private_pool_segments;
        for (const auto& b : snap.blocks_of(seg)) {
            ++by_state[b.state_name];
            if (b.stack != snapshot::no_stack) ++s.blocks_with_frames;
        }
    }
    for (const auto& [state, count] : by_state) s.blocks_by_state[std::string(snap.str(state))] += count;
    for (auto& [d, totals] : totals_by_device(snap))
        if (!device || d == *device) s.devices.push_back({d, totals});
}

void describe_pools(const snapshot::Snapshot& snap, std::optional<int> device, SnapshotContents& s) {
    std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, PoolUsage> pools;
    for (const auto& seg : snap.segments) {
        if ((device && seg.device != *device) || seg.placeholder) continue;
        auto& p = pools[{seg.device, seg.stream, seg.pool_id[0], seg.pool_id[1]}];
        p.device = seg.device;
        p.stream = seg.stream;
        p.pool_id[0] = seg.pool_id[0];
        p.pool_id[1] = seg.pool_id[1];
        ++p.segments;
        if (seg.is_expandable) ++p.expandable_segments;
        p.reserved_bytes += seg.total_size;
        for (const auto& b : snap.blocks_of(seg)) {
            if (b.live()) p.allocated_bytes += b.size;
            if (b.state == snapshot::BlockState::active_pending_free) p.pending_free_bytes += b.size;
            if (b.state == snapshot::BlockState::inactive) {
                p.free_bytes += b.size;
                p.largest_free_block_bytes = std::max(p.largest_free_block_bytes, b.size);
            }
        }
    }
    for (auto& [key, p] : pools) {
        s.largest_free_block_bytes = std::max(s.largest_free_block_bytes, p.largest_free_block_bytes);
        s.pools.push_back(p);
    }
}

// The trace sample's hash: fixed, so that two captures sample the same events.
constexpr std::uint64_t kSampleSeed = 0x6d656d736e617073ULL;  // "memsnaps"
constexpr std::uint64_t kSampleEvery = 64;
constexpr std::size_t kSampleWhole = 4096;  // traces this short are kept whole

std::uint64_t event_hash(const snapshot::TraceEvent& e) {
    std::uint64_t h = util::mix_hash(kSampleSeed, static_cast<std::uint64_t>(e.time_us));
    h = util::mix_hash(h, static_cast<std::uint64_t>(e.addr));
    h = util::mix_hash(h, static_cast<std::uint64_t>(e.size));
    return util::mix_hash(h, (static_cast<std::uint64_t>(e.action()) << 32) |
                                 static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.device)));
}

// The trace's counts and its sample, in one pass over the events: each event is decoded once.
// Traces of at most kSampleWhole timed events are sampled whole; a longer one keeps the events
// whose hash is a multiple of kSampleEvery. Which applies is known at the end, so the first
// kSampleWhole timed events are kept whole as well until then.
void describe_trace(const snapshot::Snapshot& snap, std::optional<int> device, SnapshotContents& s) {
    s.trace_devices = snap.trace_devices;
    // Known actions by their enumerator; the others, which torch added after this reader, by
    // the name in their note.
    std::array<std::int64_t, static_cast<std::size_t>(snapshot::TraceAction::other) + 1> by_action{};
    std::vector<std::uint64_t> whole;
    std::size_t timed = 0;
    for (const auto& e : snap.events) {
        if (device && e.device != *device) continue;
        ++by_action[static_cast<std::size_t>(e.action())];
        if (e.stack != snapshot::no_stack) ++s.trace_events_with_stack;
        if (e.action() == snapshot::TraceAction::oom) ++s.oom_events;
        if (e.time_us < 0) continue;
        s.trace_first_us = std::min(s.trace_first_us.value_or(e.time_us), e.time_us);
        s.trace_last_us = std::max(s.trace_last_us.value_or(e.time_us), e.time_us);
        const auto h = event_hash(e);
        if (++timed <= kSampleWhole) whole.push_back(h);
        if (h % kSampleEvery == 0) s.trace_sample.push_back(h);
    }
    s.trace_sample_all = timed <= kSampleWhole;
    if (s.trace_sample_all) s.trace_sample = std::move(whole);
    std::sort(s.trace_sample.begin(), s.trace_sample.end());
    for (std::size_t a = 0; a + 1 < by_action.size(); ++a)
        if (by_action[a] != 0)
            s.trace_events_by_action[std::string(to_string(static_cast<snapshot::TraceAction>(a)))] += by_action[a];
    if (by_action.back() == 0) return;
    std::map<snapshot::StringId, std::int64_t> other_names;  // each name copied once, however long
    for (const auto& note : snap.event_notes) {
        const auto& e = snap.events[note.event];
        if (e.action() == snapshot::TraceAction::other && (!device || e.device == *device))
            ++other_names[note.action_name];
    }
    for (const auto& [name, count] : other_names) s.trace_events_by_action[std::string(snap.str(name))] += count;
}

void describe_sites(const snapshot::Snapshot& snap, const AnalysisOptions& options, SnapshotContents& s) {
    StackIndex index({&snap}, options.rules, {});
    const auto blocks = collect_blocks(snap, 0, index, options.device);
    // Grouped by number (as group_sites does), each site named once.
    std::map<std::pair<std::uint64_t, Category>, std::size_t> position;
    for (const auto& b : blocks.live) {
        const auto category = b.category;
        auto& c = s.categories[static_cast<std::size_t>(category)];
        c.bytes += b.size;
        ++c.blocks;
        const std::uint64_t token = site_token(index, b.stack, b.size);
        const auto [at, inserted] = position.try_emplace({token, category}, s.top_sites.size());
        if (inserted) {
            s.top_sites.emplace_back();
            s.top_sites.back().site = site_key(index, b.stack, b.size, category);
            s.top_sites.back().has_stack = !without_stack(b.stack);
            s.top_sites.back().category = category;
        }
        auto& u = s.top_sites[at->second];
        u.bytes += b.size;
        ++u.blocks;
    }
    s.site_count = static_cast<std::int64_t>(s.top_sites.size());
    // Ties broken by the site itself so that output never depends on map or hash order.
    std::sort(s.top_sites.begin(), s.top_sites.end(), [](const SiteUsage& a, const SiteUsage& b) {
        if (a.bytes != b.bytes) return a.bytes > b.bytes;
        return a.site < b.site;
    });
    if (options.top != 0 && s.top_sites.size() > options.top) s.top_sites.resize(options.top);
}

}  // namespace

SnapshotContents describe_snapshot(const snapshot::Snapshot& snap, const AnalysisOptions& options) {
    require_device(snap, options.device);
    SnapshotContents s;
    s.file = snap.source.path;
    s.encoding = snap.source.encoding;
    s.writer = snap.source.writer;
    s.generation = snap.source.generation;
    s.protocol = snap.source.protocol;
    s.features = snap.source.features;
    s.device = options.device;
    s.totals = compute_totals(snap, options.device);
    describe_segments(snap, options.device, s);
    describe_trace(snap, options.device, s);
    s.main_script = detail::main_script(snap);
    describe_sites(snap, options, s);
    describe_pools(snap, options.device, s);
    s.allocator_settings = snap.allocator_settings;
    s.has_allocator_settings = snap.has_allocator_settings;
    s.annotations = static_cast<std::int64_t>(snap.annotations.size());
    s.top_level_keys = snap.top_level_keys;
    s.warnings = snap.warnings;
    return s;
}

SampleOverlap share_trace_events(const SnapshotContents& before, const SnapshotContents& after) {
    SampleOverlap out;
    std::vector<std::uint64_t> common;
    // With one sample whole, only the other's sampled events can be compared.
    const auto& a = before.trace_sample;
    const auto& b = after.trace_sample;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
    out.shared = static_cast<std::int64_t>(common.size());
    out.sampled = !before.trace_sample_all || !after.trace_sample_all;
    if (out.shared > 0 || !before.trace_first_us || !after.trace_first_us) return out;
    const auto from = std::max(*before.trace_first_us, *after.trace_first_us);
    const auto to = std::min(*before.trace_last_us, *after.trace_last_us);
    if (from > to) return out;
    // Overlapping windows: how many sampled events each holds there (a few at least on both
    // sides, or sampling alone could explain sharing none).
    const double span_a = static_cast<double>(*before.trace_last_us - *before.trace_first_us + 1);
    const double span_b = static_cast<double>(*after.trace_last_us - *after.trace_first_us + 1);
    const double overlap = static_cast<double>(to - from + 1);
    const auto in_a = static_cast<std::int64_t>(static_cast<double>(a.size()) * overlap / span_a);
    const auto in_b = static_cast<std::int64_t>(static_cast<double>(b.size()) * overlap / span_b);
    if (std::min(in_a, in_b) >= 8) out.apart = std::min(in_a, in_b);
    return out;
}

}  // namespace memsnap::analysis
