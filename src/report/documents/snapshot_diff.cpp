// The document of a snapshot diff ("kind": "snapshot_diff").
#include "common.hpp"
#include "documents.hpp"
#include "phrases.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <memory>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace memsnap::report::doc {

namespace {

using analysis::SnapshotDiff;

void add_header(Node& root, const SnapshotDiff& d) {
    root.add("before", Value::text_of(d.before_file)).machines_only();
    root.add("after", Value::text_of(d.after_file)).machines_only();
    root.add("steps_text", Value::text_of(steps_text(d.steps)), "steps").people_only();
    if (d.steps.span)
        root.add(numbers("steps", {d.steps.span->first, d.steps.span->second}));
    else
        root.add("steps", Value::none()).machines_only();
    root.add("steps_source", Value::word(d.steps.source)).machines_only();
    const auto& c = d.comparability;
    pair_comparability(root, c);
    root.add("device", Value::optional<int>(d.device, [](int v) { return Value::count(v); })).machines_only();
    auto& devices = root.add(Node::object("devices", Layout::hidden));
    for (const auto* side : {&d.devices.before, &d.devices.after}) {
        auto& list = devices.add(Node::list(side == &d.devices.before ? "before" : "after", Layout::hidden));
        for (const int id : *side) list.add(Node::of("", Value::count(id)));
    }
    root.add("devices_text",
             Value::text_of(
                 d.devices.before != d.devices.after
                     ? fmt::format("{} before, {} after", device_list(d.devices.before), device_list(d.devices.after))
                     : device_list(d.devices.after)),
             "devices")
        .people_only();
}

// Rates per step are behaviour: with steps, in a known order, between captures that may be one
// run. Otherwise people see the change itself (a rate "per capture" of two captures is their
// change, and between separate runs not a rate of anything); JSON keeps its per-step keys.
bool rates_shown(const SnapshotDiff& d) { return d.steps.known() && d.comparability.behaviour_allowed(); }

void add_verdict(Node& root, const SnapshotDiff& d) {
    root.add(headline(d.headline));
    auto& v = root.add(Node::object("verdict_block", Layout::section, "Verdict"));
    v.merge = true;
    v.add("verdict", Value::verdict(analysis::to_string(d.verdict))).in_headline();
    auto& rates = v.add(Node::object("rates", Layout::line)).people_only();
    rates.in_headline();
    const auto change = [&](const analysis::TotalChange& t) {
        return rates_shown(d) ? Value::rate(t.per_step, true) : Value::signed_bytes(t.delta);
    };
    rates.add("allocated", change(d.totals.allocated), "allocated");
    rates.add("reserved", change(d.totals.reserved), "reserved");
    v.add(facts("evidence", d.evidence));
    v.add(advice("advice", d.advice, "advice"));
}

void add_peaks(Node& root, const SnapshotDiff& d) {
    auto& peaks = root.add(Node::object("peaks", Layout::section, "Peaks of allocated memory (from the traces)"));
    if (!d.peak_before && !d.peak_after) peaks.layout = Layout::hidden;
    peaks.add(peak("before", d.peak_before, "before"));
    peaks.add(peak("after", d.peak_after, "after"));
}

void add_totals(Node& root, const SnapshotDiff& d) {
    auto& totals = root.add(Node::list("totals", Layout::table, "Totals"));
    totals.keyed_by = "name";
    for (const auto& field : analysis::TotalsChange::fields()) {
        const auto& t = d.totals.*field.member;
        auto& row = totals.add(Node::object("", Layout::facts));
        row.add("name", Value::word(field.name), "total");
        row.add("before", Value::bytes(t.before));
        row.add("after", Value::bytes(t.after));
        row.add("delta", Value::signed_bytes(t.delta));
        auto& per_step =
            row.add("per_step", Value::rate(t.per_step, d.steps.known()), util::per_unit(d.steps.known()).data());
        if (!rates_shown(d)) per_step.machines_only();  // the delta column says it
    }
    auto& blocks = root.add(Node::object("blocks", Layout::line, "live blocks"));
    blocks.add("live_before", Value::count(d.live_blocks_before), "before");
    blocks.add("live_after", Value::count(d.live_blocks_after), "after");
    // Blocks followed by address mean something only in one run: between captures compared as
    // levels, people do not see them (machines keep them).
    const bool followed = d.comparability.behaviour_allowed();
    blocks.add("survivors", Value::count(d.survivors), "survivors");
    blocks.add("new", Value::count(d.new_blocks), "new");
    blocks.add("gone", Value::count(d.gone_blocks), "gone");
    if (!followed)
        for (auto& n : blocks.items)
            if (n.key == "survivors" || n.key == "new" || n.key == "gone") n.machines_only();
    auto& pending = root.add(Node::object("pending_free_bytes", Layout::line, "pending free"));
    pending.add("before", Value::bytes(d.pending_free_before), "before");
    pending.add("after", Value::bytes(d.pending_free_after), "after");
    if (d.pending_free_before == 0 && d.pending_free_after == 0) pending.machines_only();
    auto& categories = root.add(Node::list("categories", Layout::table, "Categories"));
    categories.keyed_by = "name";
    for (const auto c : analysis::all_categories()) {
        const auto& cc = d.categories[static_cast<std::size_t>(c)];
        auto& row = categories.add(Node::object("", Layout::facts));
        row.add("name", Value::word(analysis::to_string(c)), "category");
        row.add("before_bytes", Value::bytes(cc.before_bytes), "before");
        row.add("after_bytes", Value::bytes(cc.after_bytes), "after");
        row.add("delta_bytes", Value::signed_bytes(cc.delta_bytes()), "delta");
        row.add("before_blocks", Value::count(cc.before_blocks)).machines_only();
        row.add("after_blocks", Value::count(cc.after_blocks)).machines_only();
        if (cc.before_blocks == 0 && cc.after_blocks == 0) row.machines_only();
    }
}

void add_diagnosis(Node& root, const SnapshotDiff& d) {
    add_peaks(root, d);
    auto& overall = root.add(diagnosis(d.overall));
    overall.label = "Diagnosis";
    root.add("stacks_recorded", Value::flag(d.stacks_recorded)).machines_only();
    root.add("stacks_recorded_before", Value::flag(d.stacks_recorded_before)).machines_only();
    root.add("stacks_recorded_after", Value::flag(d.stacks_recorded_after)).machines_only();
    if (!d.convergence) {
        root.add("convergence", Value::none()).machines_only();
        return;
    }
    const auto& c = *d.convergence;
    auto& n = root.add(Node::object("convergence", Layout::line, "growth converges in"));
    n.add("frame", frame(c.frame));
    n.add("share", Value::share(c.share), "share of the growth");
    n.add("sites", Value::count(static_cast<std::int64_t>(c.sites)), "sites below it");
    n.add("inclusive_bytes", Value::bytes(c.inclusive_bytes), "inclusive");
    n.add("exclusive_bytes", Value::bytes(c.exclusive_bytes), "in the frame itself");
}

// What a site says that an earlier listed site said already: people read it once.
struct SaidBefore {
    bool no_stack = false;
    bool reason = false;
};

std::vector<SaidBefore> said_before(const std::vector<analysis::SiteChange>& sites) {
    std::vector<SaidBefore> out(sites.size());
    bool no_stack = false;
    std::set<std::string_view> reasons;
    for (std::size_t i = 0; i < sites.size(); ++i) {
        out[i].no_stack = !sites[i].has_stack && std::exchange(no_stack, true);
        out[i].reason = sites[i].reason && !reasons.insert(sites[i].reason).second;
    }
    return out;
}

Node site_record(const analysis::SiteChange& s, const SnapshotDiff& d, SaidBefore said = {}) {
    auto r = Node::object("", Layout::facts);
    r.add("rank", Value::count(static_cast<std::int64_t>(s.rank))).in_headline();
    if (rates_shown(d)) {
        r.add("growth_bytes_per_step", Value::rate(s.growth_bytes_per_step, true), "growth").in_headline();
    } else {
        r.add("growth_bytes_per_step", Value::rate(s.growth_bytes_per_step, d.steps.known())).machines_only();
        r.add("change", Value::signed_bytes(s.delta_bytes), "change").people_only().in_headline();
    }
    r.add("verdict", Value::verdict(analysis::to_string(s.verdict))).in_headline();
    add_site(r, s.site);
    r.add("has_stack", Value::flag(s.has_stack)).machines_only();
    r.add("category", Value::word(analysis::to_string(s.category))).in_headline();
    auto& bytes = r.add(Node::object("bytes", Layout::line));
    bytes.merge = true;
    bytes.add("before_bytes", Value::bytes(s.before_bytes), "before");
    bytes.add("after_bytes", Value::bytes(s.after_bytes), "after");
    bytes.add("delta_bytes", Value::signed_bytes(s.delta_bytes), "change");
    auto& blocks = r.add(Node::object("blocks", Layout::line));
    blocks.merge = true;
    blocks.add("before_blocks", Value::count(s.before_blocks), "before");
    blocks.add("after_blocks", Value::count(s.after_blocks), "after");
    blocks.add("delta_blocks", Value::signed_count(s.delta_blocks), "change");
    blocks.add("new_blocks", Value::count(s.new_blocks), "new");
    blocks.add("gone_blocks", Value::count(s.gone_blocks), "gone");
    blocks.add("survivor_blocks", Value::count(s.survivor_blocks), "survivors");
    if (!d.comparability.behaviour_allowed())  // followed by address only in one run
        for (auto& n : blocks.items)
            if (n.key != "before_blocks" && n.key != "after_blocks" && n.key != "delta_blocks") n.machines_only();
    auto& share = r.add("share", s.share ? Value::share(*s.share) : Value::none(), "share of the growth");
    if (!s.share) share.machines_only();
    r.add(diagnosis(s.diagnosis));
    if (s.reason) {
        auto& reason =
            r.add(facts("reason", {analysis::Fact(analysis::FactKind::growth_reason).text("reason", s.reason)}));
        reason.label = "not judged";
        if (said.reason) reason.machines_only();
    }
    if (!s.has_stack) {
        auto& no_stack = r.add(facts("no_stack", {analysis::Fact(analysis::FactKind::site_without_stack)}));
        no_stack.label = "stack";
        if (said.no_stack) no_stack.machines_only();
    }
    auto& stacks = r.add(Node::list("stacks", Layout::section));
    for (const auto& st : s.stacks) {
        // Unchanged stacks say nothing to people.
        stacks.add(
            stack(st, d.frame_table,
                  fmt::format("stack ({} x {})", util::signed_count(st.delta_blocks), util::human_bytes(st.size)),
                  st.delta_blocks != 0));
    }
    add_stacks_not_shown(r, s.stacks_not_shown, "blocks", "stack-and-size group");
    return r;
}

void add_sites(Node& root, const SnapshotDiff& d) {
    const std::size_t hidden = d.sites_beyond_top + d.sites_below_min_growth;
    std::string why;
    if (d.sites_beyond_top) why += fmt::format(", {} beyond --top (--top 0 lists all)", d.sites_beyond_top);
    if (d.sites_below_min_growth) why += fmt::format(", {} below --min-growth", d.sites_below_min_growth);
    auto& sites = root.add(
        Node::list("sites", Layout::records,
                   fmt::format("Sites, leaks first, by the size of their change{} ({} of {} sites{})",
                               rates_shown(d) ? " per step" : "", d.sites_total - hidden, d.sites_total, why)));
    sites.primary = true;
    sites.prototype = std::make_shared<const Node>(site_record(analysis::SiteChange{}, d));  // CSV header of none
    sites.note = d.sites_total == 0 ? "No live blocks in either capture." : "No site passes the filters.";
    sites.count = d.sites.size();
    sites.make = [&d, said = std::make_shared<const std::vector<SaidBefore>>(said_before(d.sites))](std::size_t i) {
        return site_record(d.sites[i], d, (*said)[i]);
    };
    root.add("sites_total", Value::count(static_cast<std::int64_t>(d.sites_total))).machines_only();
    auto& not_listed = root.add(Node::object("sites_not_listed", Layout::hidden));
    not_listed.add("beyond_top", Value::count(static_cast<std::int64_t>(d.sites_beyond_top)));
    not_listed.add("below_min_growth", Value::count(static_cast<std::int64_t>(d.sites_below_min_growth)));
    not_listed.add("delta_bytes", Value::signed_bytes(d.sites_not_listed_delta_bytes));
}

}  // namespace

Document snapshot_diff(const SnapshotDiff& d) {
    Document doc;
    doc.kind = "snapshot_diff";
    doc.title = fmt::format("memsnap diff {} → {}", d.before_file, d.after_file);
    add_header(doc.root, d);
    add_verdict(doc.root, d);
    add_totals(doc.root, d);
    add_diagnosis(doc.root, d);
    add_sites(doc.root, d);
    doc.root.add(facts("notes", d.notes, "Notes"));
    doc.root.add(facts("warnings", d.warnings)).machines_only();
    return doc;
}

}  // namespace memsnap::report::doc
