#include "common.hpp"

#include "phrases.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <string_view>

namespace memsnap::report::doc {

Value site(const analysis::SiteKey& s) {
    auto v = Value::frame(s.filename, s.line, s.name);
    v.compiled = s.compiled_graph;
    return v;
}

Value frame(const analysis::FrameText& f) {
    auto out = Value::frame(f.filename, f.line, f.name, f.python);
    out.user = f.user;
    return out;
}

void add_site(Node& record, const analysis::SiteKey& s, bool headline) {
    auto& shown = record.add("site", site(s)).people_only();
    shown.headline = headline;
    record.add("frame", Value::frame(s.filename, s.line, s.name)).machines_only();
    record.add("user_code", Value::flag(s.user_code)).machines_only();
    record.add("compiled_graph", Value::flag(s.compiled_graph)).machines_only();
}

Node stack(const analysis::RepresentativeStack& s, const std::vector<analysis::FrameText>& table, std::string label,
           bool shown) {
    auto out = Node::object("", Layout::section);
    out.add("size", Value::bytes(s.size)).machines_only();
    out.add("delta_blocks", Value::signed_count(s.delta_blocks)).machines_only();
    out.add("delta_bytes", Value::signed_bytes(s.delta_bytes)).machines_only();
    out.add("category", Value::word(analysis::to_string(s.category))).machines_only();
    auto& frames = out.add(Node::list("frames", shown ? Layout::stack : Layout::hidden, std::move(label)));
    for (const auto i : s.frames) frames.add(Node::of("", frame(table[i])));
    if (s.frames_omitted)
        frames.add(Node::of("", Value::text_of(fmt::format("... {} outer frames not kept", s.frames_omitted))))
            .people_only();
    out.add("frames_omitted", Value::count(static_cast<std::int64_t>(s.frames_omitted))).machines_only();
    return out;
}

void add_stacks_not_shown(Node& record, const analysis::StacksNotShown& rest, std::string_view unit,
                          std::string_view group) {
    record.add("stacks_not_shown", Value::count(rest.groups)).machines_only();
    record.add("stacks_not_shown_blocks", Value::signed_count(rest.delta_blocks)).machines_only();
    record.add("stacks_not_shown_bytes", Value::signed_bytes(rest.delta_bytes)).machines_only();
    if (rest.groups > 0)
        record
            .add("more_stacks",
                 Value::text_of(fmt::format(
                     "{} {} ({}) in {} more {}{} not shown", util::signed_count(rest.delta_blocks), unit,
                     util::signed_bytes(rest.delta_bytes), rest.groups, group, rest.groups == 1 ? "" : "s")),
                 "other stacks")
            .people_only();
}

Node sentences(std::string key, const std::vector<std::string>& lines, std::string label) {
    auto out = Node::list(std::move(key), Layout::bullets, std::move(label));
    for (const auto& line : lines) out.add(Node::of("", Value::text_of(line)));
    return out;
}

void add_usage(Node& parent, const analysis::MomentUsage& usage) {
    auto& categories = parent.add(Node::object("categories", Layout::line));
    for (const auto c : analysis::all_categories()) {
        const auto bytes = usage.category_bytes[static_cast<std::size_t>(c)];
        auto& n = categories.add(std::string(analysis::to_string(c)), Value::bytes(bytes),
                                 std::string(analysis::to_string(c)));
        if (bytes == 0) n.machines_only();
    }
    categories.note = "none";
    auto& sites = parent.add(Node::list("sites", Layout::records));
    for (const auto& s : usage.sites) {
        auto& r = sites.add(Node::object("", Layout::facts));
        r.add("rank", Value::count(static_cast<std::int64_t>(s.rank))).in_headline();
        r.add("bytes", Value::bytes(s.bytes)).in_headline();
        r.add("allocations", Value::count(s.allocations, "allocation")).in_headline();
        add_site(r, s.site);
        r.add("category", Value::word(analysis::to_string(s.category))).in_headline();
    }
    if (usage.sites_not_listed > 0)
        parent
            .add("more_sites",
                 Value::text_of(fmt::format("{} more {} {} in {} (--top 0 lists all)", usage.sites_not_listed,
                                            usage.sites_not_listed == 1 ? "site holds" : "sites hold",
                                            util::human_bytes(usage.bytes_not_listed),
                                            counted(usage.allocations_not_listed, "allocation"))),
                 "not listed")
            .people_only();
    parent.add("sites_not_listed", Value::count(usage.sites_not_listed)).machines_only();
    parent.add("sites_not_listed_bytes", Value::bytes(usage.bytes_not_listed)).machines_only();
    parent.add("sites_not_listed_allocations", Value::count(usage.allocations_not_listed)).machines_only();
}

namespace {

// The same sites (by what they are, not only their figures) and the same categories.
bool same_usage(const analysis::MomentUsage& a, const analysis::MomentUsage& b) {
    if (a.category_bytes != b.category_bytes || a.sites.size() != b.sites.size() ||
        a.sites_not_listed != b.sites_not_listed || a.bytes_not_listed != b.bytes_not_listed ||
        a.allocations_not_listed != b.allocations_not_listed)
        return false;
    for (std::size_t i = 0; i < a.sites.size(); ++i)
        if (a.sites[i].site != b.sites[i].site || a.sites[i].bytes != b.sites[i].bytes ||
            a.sites[i].allocations != b.sites[i].allocations || a.sites[i].category != b.sites[i].category ||
            a.sites[i].has_stack != b.sites[i].has_stack)
            return false;
    return true;
}

}  // namespace

Node oom(const analysis::OomExplanation& o, const std::vector<analysis::FrameText>& table, std::string when,
         const analysis::MomentUsage* peak) {
    auto out = Node::object("", Layout::facts);
    out.add("what",
            Value::text_of(fmt::format("Out of memory {}: requested {}, {} free on the device", when,
                                       util::human_bytes(o.requested_bytes), util::human_bytes(o.device_free_bytes))))
        .people_only()
        .in_headline();
    out.add("classification", Value::verdict(analysis::to_string(o.classification))).in_headline();
    out.add("device", Value::count(o.device)).machines_only();
    out.add("time_us", time_us(o.time_us)).machines_only();
    out.add("event", Value::count(static_cast<std::int64_t>(o.event))).machines_only();
    out.add("requested_bytes", Value::bytes(o.requested_bytes)).machines_only();
    out.add("device_free_bytes", Value::bytes(o.device_free_bytes)).machines_only();
    out.add("allocated_bytes", Value::bytes(o.allocated_bytes)).machines_only();
    out.add("reserved_bytes", Value::bytes(o.reserved_bytes)).machines_only();
    out.add("largest_free_block_bytes", Value::bytes(o.largest_free_block_bytes)).machines_only();
    out.add("largest_free_block_same_stream_bytes", Value::bytes(o.largest_free_block_same_stream_bytes))
        .machines_only();
    out.add("stream", Value::count(o.stream)).machines_only();
    out.add("device_memory_bytes", Value::optional<std::int64_t>(o.device_memory_bytes, Value::bytes)).machines_only();
    out.add("frame", o.frame ? frame(*o.frame) : Value::none(), "at");
    out.add("cause", Value::text_of(std::string(summary(o.classification))), "likely");
    out.add(facts("evidence", o.evidence));
    out.add("fix", Value::text_of(o.classification == analysis::Pattern::device_full
                                      ? device_full_fix(o.usage.category_bytes, o.evidence)
                                      : std::string(fix(o.classification))));
    out.add(stack(o.stack, table, "stack of the failing request")).key = "stack";
    auto& live = out.add(Node::object("live", Layout::section, "live at that moment"));
    live.merge = true;
    add_usage(live, o.usage);
    if (peak && same_usage(*peak, o.usage)) {
        for (auto& n : live.items) n.machines_only();
        live.add("same_as_peak", Value::text_of("the same as at the peak above"), "sites and categories").people_only();
    }
    return out;
}

void comparability_lines(Node& root, const analysis::Comparability& c) {
    root.add("same_process_text", Value::text_of(answer_text(c.same_process, c.process_evidence)), "same process")
        .people_only();
    root.add("same_workload_text", Value::text_of(answer_text(c.same_workload, c.workload_evidence)), "same workload")
        .people_only();
    // An order contradicted by the captures themselves (a clock or counter running backwards).
    if (!c.order_known && c.order_contradicted())
        root.add("order_text", Value::text_of("unknown: " + phrase(c.order_evidence.front())), "order").people_only();
}

void pair_comparability(Node& root, const analysis::Comparability& c) {
    comparability_lines(root, c);
    root.add("same_process", c.same_process == analysis::Answer::unknown
                                 ? Value::none()
                                 : Value::flag(c.same_process == analysis::Answer::yes))
        .machines_only();
    root.add(facts("same_process_evidence", c.process_evidence)).machines_only();
    root.add(comparability(c)).machines_only();
}

Node comparability(const analysis::Comparability& c) {
    auto out = Node::object("comparability", Layout::section, "Comparability");
    out.add("same_process", Value::word(analysis::to_string(c.same_process)), "one process");
    out.add(facts("process_evidence", c.process_evidence));
    out.add("same_workload", Value::word(analysis::to_string(c.same_workload)), "same workload");
    out.add(facts("workload_evidence", c.workload_evidence));
    out.add("order_known", Value::flag(c.order_known), "known order");
    out.add(facts("order_evidence", c.order_evidence));
    out.add("behaviour_judged", Value::flag(c.behaviour_allowed()), "behaviour judged");
    return out;
}

Node headline(const analysis::Facts& list) {
    auto out = facts("headline", list);
    out.layout = Layout::bullets;
    return out;
}

Value reached_by_event(const analysis::Peak& p) {
    return p.event > 0 ? Value::count(static_cast<std::int64_t>(p.event) - 1) : Value::none();
}

// On every real capture the allocations live at the peak add up to it exactly; a trace whose
// frees are missing (recording stopped and resumed), or which frees more blocks made before it
// than its snapshot could have held, breaks it down into more (or less) than the peak.
std::optional<std::string> peak_caveat(const analysis::Peak& p) {
    std::int64_t counted = 0;
    for (const auto bytes : p.usage.category_bytes) counted += bytes;
    const auto never_freed = [&](std::string_view what) {
        return fmt::format(
            "{} {} ({}): never freed in the trace, not blocks of the snapshot (their frees are missing: recording "
            "stopped and resumed?)",
            p.not_in_snapshot, what, util::human_bytes(p.not_in_snapshot_bytes));
    };
    if (counted != p.bytes)
        return fmt::format(
            "the allocations below add up to {}, {} {} than this peak: the trace does not match its "
            "snapshot{}; they are what the trace shows, not what was live",
            util::human_bytes(counted), util::human_bytes(counted > p.bytes ? counted - p.bytes : p.bytes - counted),
            counted > p.bytes ? "more" : "less", p.not_in_snapshot > 0 ? ", and " + never_freed("of them") : "");
    if (p.not_in_snapshot > 0)
        return never_freed("of the allocations below") + ", so some may have been freed before this peak";
    return std::nullopt;
}

Node peak(std::string key, const std::optional<analysis::Peak>& p, std::string label) {
    if (!p) return Node::of(std::move(key), Value::none()).machines_only();
    auto out = Node::object(std::move(key), Layout::section, std::move(label));
    out.add("bytes", Value::bytes(p->bytes)).in_headline();
    out.add("device", Value::count(p->device)).machines_only();
    out.add("time_us", time_us(p->time_us)).machines_only();
    out.add("event", Value::count(static_cast<std::int64_t>(p->event))).machines_only();
    out.add("reached_by_event", reached_by_event(*p)).machines_only();
    out.add("not_in_snapshot", Value::count(p->not_in_snapshot)).machines_only();
    out.add("not_in_snapshot_bytes", Value::bytes(p->not_in_snapshot_bytes)).machines_only();
    if (const auto caveat = peak_caveat(*p))
        out.add("caveat", Value::text_of(*caveat), "trace vs snapshot").people_only();
    add_usage(out, p->usage);
    return out;
}

std::string steps_text(const util::Steps& steps) {
    if (!steps.known()) return "unknown";
    return fmt::format("{} → {} ({} steps, from {})", steps.span->first, steps.span->second, steps.distance(),
                       steps.source);
}

std::string device_list(const std::vector<int>& devices) {
    return devices.empty() ? std::string("none") : fmt::format("{}", fmt::join(devices, ", "));
}

Value time_us(std::int64_t us) { return us >= 0 ? Value::count(us) : Value::none(); }

std::string sparkline(const std::vector<std::int64_t>& all, std::int64_t floor) {
    static constexpr const char* bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    constexpr std::size_t kWidth = 60;
    if (all.empty()) return "";
    std::vector<std::int64_t> values;
    if (all.size() <= kWidth) {
        values = all;
    } else {
        for (std::size_t b = 0; b < kWidth; ++b) {
            const auto begin = all.begin() + static_cast<std::ptrdiff_t>(b * all.size() / kWidth);
            const auto end = all.begin() + static_cast<std::ptrdiff_t>((b + 1) * all.size() / kWidth);
            values.push_back(*std::max_element(begin, end));
        }
    }
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    // A spread within the noise floor is drawn at the floor's scale: low, not full height.
    const std::int64_t scale = std::max(*hi - *lo, floor);
    std::string out;
    for (const auto v : values) {
        const double share = scale == 0 ? 0.0 : static_cast<double>(v - *lo) / static_cast<double>(scale);
        out += bars[std::min<std::size_t>(7, static_cast<std::size_t>(share * 8))];
    }
    return out;
}

std::string run_lengths(const std::vector<std::int64_t>& counts) {
    std::string out;
    for (std::size_t i = 0; i < counts.size();) {
        std::size_t j = i;
        while (j < counts.size() && counts[j] == counts[i]) ++j;
        out += fmt::format("{}{}", out.empty() ? "" : " ", counts[i]);
        if (j - i > 1) out += fmt::format("×{}", j - i);
        i = j;
    }
    return out;
}

Node numbers(std::string key, const std::vector<std::int64_t>& values) {
    auto out = Node::of(std::move(key), Value::numbers(values));
    out.layout = Layout::hidden;
    return out.machines_only();
}

std::string counted(std::int64_t n, std::string_view noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

}  // namespace memsnap::report::doc
