// The peak a diff reports for each side, found in two passes that hold only the live
// allocations, against the full replay that keeps every allocation and every event's total:
// the same moment, bytes, time and live allocations (in the same order), or the same refusal.

#include "analysis/trace/peak_moment.hpp"

#include "support.hpp"

#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/trace.hpp>
#include <memsnap/error.hpp>
#include <memsnap/snapshot/load.hpp>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <random>
#include <set>

using namespace memsnap;
using analysis::detail::PeakMoment;
using snapshot::TraceAction;

namespace {

std::optional<PeakMoment> peak_or_refusal(const snapshot::Snapshot& snap, int device, bool full, std::string& refusal) {
    try {
        return full ? analysis::detail::peak_moment_by_replay(snap, device)
                    : analysis::detail::peak_moment(snap, device);
    } catch (const Error& e) {
        refusal = e.what();
        return std::nullopt;
    }
}

// Allocations counted live at some device's peak that the trace leaves live and the snapshot
// does not hold, over every check_same_peaks call: the tests check both ways met some.
std::size_t not_in_snapshot_seen = 0;

// Checks both ways agree on every device the trace names; returns how many had a peak.
int check_same_peaks(const snapshot::Snapshot& snap) {
    std::set<int> devices;
    for (std::size_t i = 0; i < snap.events.size(); ++i) devices.insert(snap.events.device_at(i));
    int peaks = 0;
    for (const int device : devices) {
        CAPTURE(device);
        std::string fast_refusal, full_refusal;
        const auto fast = peak_or_refusal(snap, device, false, fast_refusal);
        const auto full = peak_or_refusal(snap, device, true, full_refusal);
        CHECK(fast_refusal == full_refusal);
        REQUIRE(fast.has_value() == full.has_value());
        if (!fast) continue;
        ++peaks;
        CHECK(fast->at == full->at);
        CHECK(fast->allocated == full->allocated);
        CHECK(fast->time_us == full->time_us);
        CHECK(fast->not_in_snapshot == full->not_in_snapshot);
        not_in_snapshot_seen += full->not_in_snapshot;
        CHECK(fast->not_in_snapshot_bytes == full->not_in_snapshot_bytes);
        REQUIRE(fast->live.size() == full->live.size());
        for (std::size_t i = 0; i < fast->live.size(); ++i) {
            CAPTURE(i);
            const auto &a = fast->live[i], &b = full->live[i];
            CHECK(a.address == b.address);
            CHECK(a.size == b.size);
            CHECK(a.asked() == b.asked());
            CHECK(a.stack == b.stack);
            CHECK(a.alloc_event.has_value() == b.alloc_event.has_value());
            if (a.alloc_event && b.alloc_event) CHECK(*a.alloc_event == *b.alloc_event);
            CHECK_FALSE(a.free_event.has_value());
            CHECK_FALSE(b.free_event.has_value());
        }
    }
    return peaks;
}

// The capture with every `nth` event of `action` left out: lost frees make addresses allocated
// twice, lost allocs make frees of blocks the trace never saw.
snapshot::Snapshot without_every(const snapshot::Snapshot& in, TraceAction action, std::size_t nth) {
    snapshot::Snapshot s = in;
    std::vector<snapshot::TraceEvent> kept;
    std::size_t seen = 0;
    for (const auto& e : in.events)
        if (e.action() != action || ++seen % nth != 0) kept.push_back(e);
    s.events = {kept.begin(), kept.end()};
    return s;
}

// Every snapshot of ../shared/real and of the fixtures (single captures and pairs).
std::vector<std::filesystem::path> snapshot_files() {
    std::vector<std::filesystem::path> dirs{test::real_dir() / "snapshots", test::fixtures_dir() / "snapshots"};
    for (const auto& pair : std::filesystem::directory_iterator(test::fixtures_dir() / "pairs"))
        if (pair.is_directory()) dirs.push_back(pair.path());
    std::vector<std::filesystem::path> out;
    for (const auto& dir : dirs)
        for (const auto& f : test::files_in(dir))
            if (f.filename() != "expected.json" &&
                (f.extension() == ".pickle" || f.extension() == ".pkl" || f.extension() == ".json"))
                out.push_back(f);
    return out;
}

}  // namespace

TEST_SUITE("real") {
    TEST_CASE("peak moment: two passes find the peak of a full replay on every real capture and fixture") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        int peaks = 0, files = 0;
        std::size_t real_not_in_snapshot = 0;
        for (const auto& file : snapshot_files()) {
            CAPTURE(file.string());
            snapshot::Snapshot snap;
            try {
                snap = snapshot::load_snapshot(file.string());
            } catch (const Error&) {
                // Only fixtures are not snapshots (a misnamed JSON).
                CHECK(file.parent_path() != test::real_dir() / "snapshots");
                continue;
            }
            ++files;
            const auto seen = not_in_snapshot_seen;
            peaks += check_same_peaks(snap);
            if (file.parent_path() == test::real_dir() / "snapshots")
                real_not_in_snapshot += not_in_snapshot_seen - seen;
            if (snap.events.empty()) continue;
            // The oldest 40% lost, as a ring buffer loses them.
            auto late = snap;
            late.events = {snap.events.begin() + static_cast<std::ptrdiff_t>(snap.events.size() * 2 / 5),
                           snap.events.end()};
            check_same_peaks(late);
            const auto before_lost_frees = not_in_snapshot_seen;
            check_same_peaks(without_every(snap, TraceAction::free_completed, 7));
            // Frees left out leave allocations live that the snapshot does not hold.
            if (file.filename() == "nothanmin-a2_train_step.pickle") CHECK(not_in_snapshot_seen > before_lost_frees);
            check_same_peaks(without_every(snap, TraceAction::alloc, 5));
        }
        // Every real trace ends with what its snapshot holds.
        CHECK(real_not_in_snapshot == 0);
        // 19 real captures and 35 fixtures when this was written; all but three record allocs.
        CHECK(files >= 54);
        CHECK(peaks >= 51);
    }

    TEST_CASE("peak moment: the sites live at every real capture's peak add up to it") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        int peaks = 0;
        for (const auto& file : test::files_in(test::real_dir() / "snapshots")) {
            if (file.extension() != ".pickle" && file.extension() != ".pkl") continue;
            CAPTURE(file.string());
            const auto snap = snapshot::load_snapshot(file.string());
            const auto peak = analysis::trace_peak(snap, analysis::AnalysisOptions{});
            if (!peak) continue;
            ++peaks;
            std::int64_t counted = 0;
            for (const auto bytes : peak->usage.category_bytes) counted += bytes;
            CHECK(counted == peak->bytes);
            CHECK(peak->not_in_snapshot == 0);
            CHECK(peak->not_in_snapshot_bytes == 0);
        }
        // 14 real captures with a trace that records allocs when this was written.
        CHECK(peaks >= 14);
    }
}  // TEST_SUITE

TEST_SUITE("unit") {
    TEST_CASE("peak moment: a request becomes a block of a multiple of 512 bytes and at least 512") {
        using analysis::detail::block_size;
        constexpr auto max = std::numeric_limits<std::int64_t>::max();
        CHECK(block_size(std::numeric_limits<std::int64_t>::min()) == 512);
        CHECK(block_size(-5) == 512);
        CHECK(block_size(0) == 512);
        CHECK(block_size(512) == 512);
        CHECK(block_size(513) == 1024);
        CHECK(block_size(1024) == 1024);
        CHECK(block_size(1025) == 1536);
        CHECK(block_size(max - 511) == max - 511);  // 2^63 - 512, a multiple of 512
        CHECK(block_size(max - 510) == max - 510);  // past the last multiple: as requested
        CHECK(block_size(max) == max);
    }

    TEST_CASE("peak moment: random traces with lost frees and unseen frees and blocks grown at the end and ties") {
        std::mt19937_64 random(20261203);
        const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
        const std::int64_t base = std::int64_t{0x7f0000000000};
        const std::int64_t sizes[] = {100, 512, 513, 1000, 4096, 4096, std::int64_t{1} << 20};
        int peaks = 0;
        const auto seen = not_in_snapshot_seen;
        for (int round = 0; round < 400; ++round) {
            CAPTURE(round);
            snapshot::Snapshot s;
            s.source.path = "random.pickle";
            const auto stack_a = s.stacks.intern(std::vector<snapshot::FrameId>{
                s.frames.intern({s.strings.intern("/w/model.py"), s.strings.intern("forward"), 10})});
            std::vector<snapshot::TraceEvent> events;
            const std::size_t count = 1 + pick(60);
            for (std::size_t i = 0; i < count; ++i) {
                snapshot::TraceEvent e;
                const auto roll = pick(20);
                e.set_action(roll < 11   ? TraceAction::alloc
                             : roll < 18 ? TraceAction::free_completed
                             : roll < 19 ? TraceAction::free_requested
                                         : TraceAction::segment_alloc);
                e.addr = base + static_cast<std::int64_t>(pick(12)) * 0x100000;
                e.size = sizes[pick(std::size(sizes))];
                e.time_us = static_cast<std::int64_t>(1000 + i);
                e.stack = pick(2) ? stack_a : snapshot::no_stack;
                e.device = static_cast<std::int16_t>(pick(6) == 0);
                events.push_back(e);
            }
            s.events = {events.begin(), events.end()};
            // The end: blocks at some of the addresses, larger, smaller or as requested, some
            // live, some not, and blocks the trace never touched.
            for (std::int64_t slot = 0; slot < 16; ++slot) {
                if (pick(3) == 0) continue;
                snapshot::Block b;
                b.address = base + slot * 0x100000;
                b.size = b.requested_size = sizes[pick(std::size(sizes))] + (pick(2) ? 512 : 0);
                b.stack = pick(3) ? stack_a : snapshot::no_stack;
                const bool active = pick(4) != 0;
                b.state = active ? snapshot::BlockState::active_allocated : snapshot::BlockState::inactive;
                snapshot::Segment seg;
                seg.device = static_cast<int>(pick(5) == 0);
                seg.address = b.address;
                seg.total_size = b.size;
                seg.first_block = static_cast<std::uint32_t>(s.blocks.size());
                seg.block_count = 1;
                b.segment = static_cast<std::uint32_t>(s.segments.size());
                s.blocks.push_back(b);
                s.segments.push_back(seg);
            }
            // A crafted file's second block at an address already taken: the last one counts.
            if (!s.blocks.empty() && pick(4) == 0) {
                snapshot::Block twin = s.blocks[pick(s.blocks.size())];
                twin.size = twin.requested_size = sizes[pick(std::size(sizes))];
                snapshot::Segment seg = s.segments[twin.segment];
                seg.first_block = static_cast<std::uint32_t>(s.blocks.size());
                twin.segment = static_cast<std::uint32_t>(s.segments.size());
                s.blocks.push_back(twin);
                s.segments.push_back(seg);
            }
            peaks += check_same_peaks(s);
        }
        CHECK(peaks >= 300);
        CHECK(not_in_snapshot_seen > seen);
    }

    TEST_CASE("peak moment: the index sized from the actions still holds what they do not show") {
        // The index is sized by the most allocs less frees at once: frees of blocks made before
        // the trace hide live allocations from that count (the index must grow past it), and
        // allocs at an address already live inflate it (the size is capped by the trace).
        const std::int64_t base = std::int64_t{0x7f0000000000};
        struct Step {
            TraceAction action;
            std::int64_t slot, size;
        };
        const auto trace_of = [&](const std::vector<Step>& steps) {
            snapshot::Snapshot s;
            s.source.path = "sized.pickle";
            std::vector<snapshot::TraceEvent> events;
            for (const auto& step : steps) {
                snapshot::TraceEvent e;
                e.set_action(step.action);
                e.addr = base + step.slot * 0x200000;
                e.size = step.size;
                e.time_us = static_cast<std::int64_t>(1000 + events.size());
                events.push_back(e);
            }
            s.events = {events.begin(), events.end()};
            return s;
        };
        // 6,000 small blocks made before the trace freed first, then 6,000 larger allocs: the
        // peak is after them, with all 6,000 live, in an index sized for none.
        std::vector<Step> hidden;
        for (std::int64_t i = 0; i < 6000; ++i) hidden.push_back({TraceAction::free_completed, 100000 + i, 512});
        for (std::int64_t i = 0; i < 6000; ++i) hidden.push_back({TraceAction::alloc, i, 8192});
        for (std::int64_t i = 0; i < 3000; i += 2) hidden.push_back({TraceAction::free_completed, i, 8192});
        const auto grows = trace_of(hidden);
        CHECK(analysis::detail::expected_live(grows.events, 0) == 0);
        CHECK(check_same_peaks(grows) == 1);
        const auto peak = analysis::detail::peak_moment(grows, 0);
        REQUIRE(peak);
        CHECK(peak->at == 12000);
        CHECK(peak->live.size() == 6000);
        CHECK(std::all_of(peak->live.begin(), peak->live.end(), [](const auto& a) { return a.alloc_event; }));

        // 20,000 allocs at 16 addresses: the count says 20,000 live, the trace's size caps it.
        std::vector<Step> again;
        for (std::int64_t i = 0; i < 20000; ++i) again.push_back({TraceAction::alloc, i % 16, 4096});
        for (std::int64_t i = 0; i < 8; ++i) again.push_back({TraceAction::free_completed, i, 4096});
        const auto capped = trace_of(again);
        CHECK(analysis::detail::expected_live(capped.events, 0) == 20008 / 4);
        CHECK(analysis::detail::expected_live(capped.events, 1) == 0);
        CHECK(check_same_peaks(capped) == 1);
        const auto last = analysis::detail::peak_moment(capped, 0);
        REQUIRE(last);
        CHECK(last->live.size() == 16);
    }

    TEST_CASE("peak moment: sums past 64 bits are refused as a full replay refuses them") {
        const std::int64_t base = std::int64_t{0x7f0000000000};
        const auto event = [](TraceAction action, std::int64_t addr, std::int64_t size) {
            snapshot::TraceEvent e;
            e.set_action(action);
            e.addr = addr;
            e.size = size;
            e.time_us = 1;
            return e;
        };
        const auto block = [](snapshot::Snapshot& s, std::int64_t address, std::int64_t size) {
            snapshot::Block b;
            b.address = address;
            b.size = b.requested_size = size;
            b.state = snapshot::BlockState::active_allocated;
            snapshot::Segment seg;
            seg.address = address;
            seg.total_size = size;
            seg.first_block = static_cast<std::uint32_t>(s.blocks.size());
            seg.block_count = 1;
            b.segment = static_cast<std::uint32_t>(s.segments.size());
            s.blocks.push_back(b);
            s.segments.push_back(seg);
        };
        const std::int64_t quarter = std::int64_t{1} << 61;
        SUBCASE("the allocations' sizes together") {
            snapshot::Snapshot s;
            s.source.path = "sizes.pickle";
            for (std::int64_t k = 0; k < 5; ++k) s.events.push_back(event(TraceAction::alloc, base + k, quarter));
            CHECK_THROWS_AS(analysis::detail::peak_moment(s, 0), Error);
            CHECK(check_same_peaks(s) == 0);
        }
        SUBCASE("the bytes allocated before an event") {
            // Blocks the trace never saw, of negative sizes (a crafted file): the end's total is
            // the lowest 64 bits hold, and the alloc of a block live at the end takes the
            // moments before it below that.
            snapshot::Snapshot s;
            s.source.path = "before.pickle";
            block(s, base + 3, 2 * quarter);
            for (std::int64_t k = 0; k < 3; ++k) block(s, base + k, -2 * quarter);
            s.events.push_back(event(TraceAction::alloc, base + 4, 4096));
            s.events.push_back(event(TraceAction::free_completed, base + 4, 4096));
            s.events.push_back(event(TraceAction::alloc, base + 3, 2 * quarter));
            CHECK_THROWS_AS(analysis::detail::peak_moment(s, 0), Error);
            CHECK(check_same_peaks(s) == 0);
        }
        SUBCASE("near the limits but inside them: a peak, the same both ways") {
            snapshot::Snapshot s;
            s.source.path = "near.pickle";
            s.events.push_back(event(TraceAction::alloc, base, 3 * quarter));
            s.events.push_back(event(TraceAction::free_completed, base, 3 * quarter));
            s.events.push_back(event(TraceAction::alloc, base + 1, quarter / 2));
            block(s, base + 1, quarter / 2);
            CHECK(check_same_peaks(s) == 1);
        }
    }
}  // TEST_SUITE
