#include <memsnap/analysis/judge/trace_overlap.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <future>
#include <limits>
#include <map>
#include <system_error>

namespace memsnap::analysis {

namespace {

using snapshot::Snapshot;
using snapshot::TraceEvent;

// What two captures of one process share of an event: compared in this order.
struct EventKey {
    std::int64_t time_us, addr, size;
    int action, device;
    auto operator<=>(const EventKey&) const = default;
};

struct TraceWindow {
    std::int64_t first = 0, last = 0;
    bool timed = false;
};

TraceWindow window_of(const Snapshot& snap, std::optional<int> device) {
    TraceWindow w;
    for (const auto& e : snap.events) {
        if (e.time_us < 0 || (device && e.device != *device)) continue;
        w.first = w.timed ? std::min(w.first, e.time_us) : e.time_us;
        w.last = w.timed ? std::max(w.last, e.time_us) : e.time_us;
        w.timed = true;
    }
    return w;
}

EventKey key_of(const TraceEvent& e) { return {e.time_us, e.addr, e.size, static_cast<int>(e.action()), e.device}; }
std::int64_t time_of(const EventKey& k) { return k.time_us; }

// Events of `snap` timed within [from, to], as sortable keys.
std::vector<EventKey> events_within(const Snapshot& snap, std::int64_t from, std::int64_t to,
                                    std::optional<int> device) {
    std::vector<EventKey> out;
    for (const auto& e : snap.events)
        if (e.time_us >= from && e.time_us <= to && (!device || e.device == *device)) out.push_back(key_of(e));
    std::sort(out.begin(), out.end());
    return out;
}

// The first and last timed events of a trace: its window when the trace is in time order,
// which the walk below confirms (else window_of reads every event).
TraceWindow ends_of(const Snapshot& snap, std::optional<int> device) {
    const auto timed = [&](const TraceEvent& e) { return e.time_us >= 0 && (!device || e.device == *device); };
    const auto first = std::ranges::find_if(snap.events, timed);
    if (first == snap.events.end()) return {};
    const auto last = std::ranges::find_if(snap.events.rbegin(), snap.events.rend(), timed);
    return {first->time_us, last->time_us, true};
}

// Events [begin, end) of a trace, in time order when no time is before `earliest`.
struct TracePart {
    std::size_t begin = 0, end = 0;
    std::int64_t earliest = -1;
};

TracePart whole(const Snapshot& snap) { return {0, snap.events.size(), -1}; }

// The events of one side within a window of time (and the device), in file order, read one
// at a time: a long trace is walked where it lies rather than copied. It reads every event
// of the device on the way, and says whether all of them were in time order.
class WindowCursor {
  public:
    WindowCursor(const Snapshot& snap, TracePart part, std::int64_t from, std::int64_t to, std::optional<int> device)
        : events_(snap.events),
          end_(part.end),
          from_(from),
          to_(to),
          device_(device),
          at_(part.begin),
          last_time_(part.earliest) {
        skip();
    }
    // The current event's key, or nullptr past the end.
    const EventKey* current() const { return at_ < end_ ? &current_ : nullptr; }
    // Moves on; false once the events left the time order (several devices' traces, or a
    // crafted file).
    bool next() {
        ++at_;
        skip();
        return in_order_;
    }
    std::size_t count() const { return count_; }            // events within the window reached so far
    std::size_t with_stack() const { return with_stack_; }  // the device's events passed that have a stack
    bool in_order() const { return in_order_; }
    std::int64_t last_time() const { return last_time_; }

  private:
    void skip() {
        for (; at_ < end_; ++at_) {
            const TraceEvent e = events_[at_];
            if (device_ && e.device != *device_) continue;
            with_stack_ += e.stack != snapshot::no_stack;
            if (e.time_us < 0) continue;
            if (e.time_us < last_time_) in_order_ = false;
            last_time_ = e.time_us;
            if (e.time_us >= from_ && e.time_us <= to_) {
                current_ = key_of(e);
                ++count_;
                return;
            }
        }
    }
    const snapshot::TraceEvents& events_;
    std::size_t end_;
    std::int64_t from_, to_;
    std::optional<int> device_;
    std::size_t at_;
    EventKey current_;  // of events_[at_], read once (a key of scalars: a whole TraceEvent copied
                        // here and read back a field at a time stalled on store forwarding)
    std::size_t count_ = 0;
    std::size_t with_stack_ = 0;
    std::int64_t last_time_;
    bool in_order_ = true;
};

// How many keys two sorted runs share, each key counted as often as both hold it (as
// std::set_intersection would give them, without writing them out).
std::size_t shared_keys(const std::vector<EventKey>& a, const std::vector<EventKey>& b) {
    std::size_t shared = 0;
    for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end();) {
        if (*i < *j) {
            ++i;
        } else if (*j < *i) {
            ++j;
        } else {
            ++shared;
            ++i;
            ++j;
        }
    }
    return shared;
}

// Walks both windows together in time order, counting the events they share. Within one
// microsecond, equal events met side by side are counted as they come; at the first that
// differ, the rest of that microsecond on each side is compared sorted. Both count the same as
// comparing the whole microsecond sorted: what the two share of it is what they share in the
// part met equal, and what they share of the rest. Two captures of one process hold a
// microsecond's events in one order, so most are counted side by side, without looking
// ahead. nullopt when either trace is out of time order.
std::optional<std::size_t> shared_in_time_order(WindowCursor& x, WindowCursor& y) {
    std::size_t shared = 0;
    std::vector<EventKey> gx, gy;
    while (x.current() && y.current()) {
        const EventKey& kx = *x.current();
        const EventKey& ky = *y.current();
        if (kx.time_us < ky.time_us) {
            if (!x.next()) return std::nullopt;
            continue;
        }
        if (ky.time_us < kx.time_us) {
            if (!y.next()) return std::nullopt;
            continue;
        }
        if (kx == ky) {
            ++shared;
            if (!x.next() || !y.next()) return std::nullopt;
            continue;
        }
        const auto t = time_of(kx);
        gx.clear();
        gy.clear();
        for (; x.current() && time_of(*x.current()) == t;)
            if (gx.push_back(*x.current()); !x.next()) return std::nullopt;
        for (; y.current() && time_of(*y.current()) == t;)
            if (gy.push_back(*y.current()); !y.next()) return std::nullopt;
        std::sort(gx.begin(), gx.end());
        std::sort(gy.begin(), gy.end());
        shared += shared_keys(gx, gy);
    }
    // The rest of each trace counts towards the overlap and must be in order too.
    for (auto* rest : {&x, &y})
        while (rest->current())
            if (!rest->next()) return std::nullopt;
    if (!x.in_order() || !y.in_order()) return std::nullopt;  // out of order past the window's last event
    return shared;
}

struct Walk {
    std::size_t shared = 0, before_count = 0, after_count = 0;
    std::size_t with_stack = 0;                      // both sides' events of the device that have a stack
    std::int64_t before_last = -1, after_last = -1;  // the last times walked, or the parts' `earliest`
    bool in_halves = false;
    // Counts of another part of the traces (the later half, another device) added in.
    void add(const Walk& part) {
        shared += part.shared;
        before_count += part.before_count;
        after_count += part.after_count;
        with_stack += part.with_stack;
    }
};

std::optional<Walk> walk(const Snapshot& before, const Snapshot& after, TracePart x_part, TracePart y_part,
                         std::int64_t from, std::int64_t to, std::optional<int> device) {
    WindowCursor x(before, x_part, from, to, device), y(after, y_part, from, to, device);
    const auto shared = shared_in_time_order(x, y);
    if (!shared) return std::nullopt;
    return Walk{*shared, x.count(), y.count(), x.with_stack() + y.with_stack(), x.last_time(), y.last_time()};
}

// The first event of [begin, end) timed after `split`, for a trace in time order. Any trace
// may come here (several devices', untimed events among timed ones), which the standard binary
// searches do not allow: this one returns some position for any order, and the walks check it.
std::size_t first_after(const snapshot::TraceEvents& events, std::size_t begin, std::size_t end, std::int64_t split) {
    std::size_t low = begin, high = end;
    while (low < high) {
        const std::size_t mid = low + (high - low) / 2;
        if (events[mid].time_us <= split)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

// Long traces are walked in two halves at once, both split at one time: the later half on
// another core. nullopt when the traces are short, the split falls on an untimed event, no
// thread can be started, or the split does not hold (the traces are out of time order, or a
// device's events lie among others'); the caller then walks them whole.
std::optional<Walk> walk_in_halves(const Snapshot& before, const Snapshot& after, TracePart x, TracePart y,
                                   std::int64_t from, std::int64_t to, std::optional<int> device) {
    constexpr std::size_t worth_a_thread = std::size_t{1} << 18;
    if (x.begin >= x.end || (x.end - x.begin) + (y.end - y.begin) < worth_a_thread) return std::nullopt;
    const std::int64_t split = before.events[x.begin + (x.end - x.begin) / 2].time_us;
    if (split < 0 || split == std::numeric_limits<std::int64_t>::max()) return std::nullopt;
    const std::size_t x_split = first_after(before.events, x.begin, x.end, split),
                      y_split = first_after(after.events, y.begin, y.end, split);
    const auto walk_later = [&] {
        return walk(before, after, {x_split, x.end, split + 1}, {y_split, y.end, split + 1}, from, to, device);
    };
    std::future<std::optional<Walk>> later;
    try {
        later = std::async(std::launch::async, walk_later);
    } catch (const std::system_error&) {
        return std::nullopt;
    }
    const auto earlier =
        walk(before, after, {x.begin, x_split, x.earliest}, {y.begin, y_split, y.earliest}, from, to, device);
    const auto rest = later.get();
    // Each half in order, the later one after the split: then the earlier must end by it.
    if (!earlier || !rest || earlier->before_last > split || earlier->after_last > split) return std::nullopt;
    Walk both;
    both.add(*earlier);
    both.add(*rest);
    both.in_halves = true;
    return both;
}

// One part of each trace (the same device's), in halves when long enough, else whole.
std::optional<Walk> walk_parts(const Snapshot& before, const Snapshot& after, TracePart x, TracePart y,
                               std::int64_t from, std::int64_t to, std::optional<int> device) {
    if (auto halves = walk_in_halves(before, after, x, y, from, to, device)) return halves;
    return walk(before, after, x, y, from, to, device);
}

// Where each device's events lie in a trace: device_traces stores each device's list whole,
// one after the other. nullopt when some device's events are split (a crafted file).
std::optional<std::map<int, TracePart>> device_parts(const Snapshot& snap) {
    std::map<int, TracePart> parts;
    const auto& events = snap.events;
    for (std::size_t i = 0; i < events.size();) {
        const int device = events.device_at(i);
        const std::size_t begin = i;
        while (i < events.size() && events.device_at(i) == device) ++i;
        if (!parts.emplace(device, TracePart{begin, i, -1}).second) return std::nullopt;
    }
    return parts;
}

// Several devices' traces, each in time order: walked a device at a time over the window of
// all of them, which counts what comparing every event's key would, without sorting two
// whole traces. nullopt when a device's events are split or out of time order.
std::optional<Walk> walk_by_device(const Snapshot& before, const Snapshot& after, std::int64_t from, std::int64_t to) {
    const auto x_parts = device_parts(before), y_parts = device_parts(after);
    if (!x_parts || !y_parts) return std::nullopt;
    std::map<int, std::pair<TracePart, TracePart>> both;
    for (const auto& [device, part] : *x_parts) both[device].first = part;
    for (const auto& [device, part] : *y_parts) both[device].second = part;
    Walk sum;
    sum.in_halves = true;
    for (const auto& [device, parts] : both) {
        const auto one = walk_parts(before, after, parts.first, parts.second, from, to, device);
        if (!one) return std::nullopt;
        sum.add(*one);
        sum.in_halves = sum.in_halves && one->in_halves;
    }
    return sum;
}

// Two captures of one process share every event their traces both cover in time.
}  // namespace

TraceOverlap compare_traces(const Snapshot& before, const Snapshot& after, std::optional<int> device) {
    TraceOverlap t;
    const auto windows = [&t](const TraceWindow& a, const TraceWindow& b) {
        if (a.timed) t.before_first = a.first, t.before_last = a.last;
        if (b.timed) t.after_first = b.first, t.after_last = b.last;
    };
    // Each device's events lie together (device_traces holds one list per device): several
    // devices' traces, first and last events of two devices, are walked a device at a time
    // (below), not tried whole first.
    const auto devices_differ = [](const Snapshot& s) {
        return !s.events.empty() && s.events.device_at(0) != s.events.device_at(s.events.size() - 1);
    };
    const bool several = !device && (devices_differ(before) || devices_differ(after));
    // In time order (one device's ring buffer), the window is where the two traces' ends meet.
    if (const auto a = ends_of(before, device), b = ends_of(after, device); !several && a.timed && b.timed) {
        windows(a, b);
        const auto from = std::max(a.first, b.first), to = std::min(a.last, b.last);
        if (const auto walked = walk_parts(before, after, whole(before), whole(after), from, to, device)) {
            t.with_stack = walked->with_stack;
            if (from > to) return t;
            t.overlapping = std::min(walked->before_count, walked->after_count);
            t.shared = walked->shared;
            t.in_halves = walked->in_halves;
            return t;
        }
    }
    // Several devices' traces, or a crafted file: each device's walked (above), or every
    // event's key compared sorted.
    const auto a = window_of(before, device), b = window_of(after, device);
    windows(a, b);
    if (!a.timed || !b.timed) return t;
    const auto from = std::max(a.first, b.first), to = std::min(a.last, b.last);
    if (from > to) return t;
    if (!device)
        if (const auto walked = walk_by_device(before, after, from, to)) {
            t.with_stack = walked->with_stack;
            t.overlapping = std::min(walked->before_count, walked->after_count);
            t.shared = walked->shared;
            t.in_halves = walked->in_halves;
            return t;
        }
    const auto kx = events_within(before, from, to, device), ky = events_within(after, from, to, device);
    t.overlapping = std::min(kx.size(), ky.size());
    t.shared = shared_keys(kx, ky);
    return t;
}

}  // namespace memsnap::analysis
