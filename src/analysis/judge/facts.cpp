#include <memsnap/analysis/judge/facts.hpp>

#include <array>

namespace memsnap::analysis {

namespace {

// Spellings by enumerator, in declaration order: what JSON says in "fact".
constexpr std::array kNames = {
    "metric_change",
    "metric_missing",
    "non_releasable_unknown",
    "live_blocks_change",
    "new_ooms",
    "new_retries",
    "reserved_split",
    "peak_rose",
    "device_verdict",
    "sites_stay",
    "sites_first_appear",
    "sites_shape",
    "traces_share_events",
    "traces_overlap_apart",
    "trace_order_reversed",
    "traces_apart",
    "blocks_survive",
    "segments_survive",
    "nothing_shared",
    "devices_differ",
    "roots_differ",
    "main_scripts_differ",
    "setting_differs",
    "versions_differ",
    "counter_falls",
    "counters_grow",
    "no_process_evidence",
    "same_sites",
    "sites_one_side",
    "no_stacks_to_compare",
    "one_log",
    "workload_one_process",
    "summaries_no_sites",
    "order_given",
    "steps_unknown",
    "too_few_points",
    "warmup_left_out",
    "series_fit",
    "site_steady",
    "sites_agree",
    "sites_disagree",
    "jump_then_steady",
    "summary_midpoints",
    "site_counts",
    "site_appears",
    "site_same_blocks",
    "site_fewer_blocks",
    "blocks_per_step",
    "passes_user_code",
    "forward_sites_alike",
    "forward_sites_rate",
    "converges_in",
    "one_interval",
    "up_and_down",
    "growth_reason",
    "site_without_stack",
    "not_comparable",
    "caveat_same_workload",
    "stacks_before_recording",
    "no_stacks_recorded",
    "stacks_one_side",
    "stacks_some_captures",
    "focus_filter",
    "pending_free",
    "shares_unknown",
    "oom_elsewhere",
    "oom_in_capture",
    "peak_higher",
    "oom_request",
    "oom_largest_free",
    "oom_capacity",
    "oom_capacity_unknown",
    "oom_capacity_too_small",
    "oom_larger_than_held",
    "oom_levels_impossible",
    "oom_leak_site",
    "ooms_more",
    "frees_unseen",
    "entries_full",
    "lost_history",
    "trace_not_recorded",
    "recording_started_late",
    "recording_started_late_live",
    "start_unseen",
    "replay_disagrees",
    "live_not_in_snapshot",
    "negative_start",
    "twice_allocated",
    "larger_blocks",
    "iterations_none",
    "iterations_many",
    "truncated_warmup",
    "block_history_only",
    "ranks_from_order",
    "ranks_within_noise",
    "roots_several",
    "devices_as_ranks",
    "devices_hold_parts",
    "step_differs",
    "device_per_rank",
    "rank_ooms",
    "same_capture",
    "one_table",
    "series_listed",
    "metrics_one_sided",
    "metrics_missing",
    "devices_paired",
    "device_one_side",
    "gate_growth",
    "gate_not_judged",
    "file_skipped",
    "reader_warning",
};
static_assert(kNames.size() == static_cast<std::size_t>(FactKind::reader_warning) + 1);

}  // namespace

std::string_view to_string(FactKind kind) { return kNames[static_cast<std::size_t>(kind)]; }

Fact& Fact::bytes(std::string_view name, std::int64_t v) {
    values.emplace_back(name, FactValue{FactValue::Unit::bytes, v, 0, 0, {}});
    return *this;
}

Fact& Fact::count(std::string_view name, std::int64_t v) {
    values.emplace_back(name, FactValue{FactValue::Unit::count, v, 0, 0, {}});
    return *this;
}

Fact& Fact::real(std::string_view name, double v) {
    values.emplace_back(name, FactValue{FactValue::Unit::real, 0, 0, v, {}});
    return *this;
}

Fact& Fact::text(std::string_view name, std::string v) {
    values.emplace_back(name, FactValue{FactValue::Unit::text, 0, 0, 0, std::move(v)});
    return *this;
}

Fact& Fact::flag(std::string_view name, bool v) {
    values.emplace_back(name, FactValue{FactValue::Unit::flag, v ? 1 : 0, 0, 0, {}});
    return *this;
}

Fact& Fact::range(std::string_view name, ByteRange r, bool bytes) {
    values.emplace_back(
        name, FactValue{bytes ? FactValue::Unit::bytes_range : FactValue::Unit::count_range, r.low, r.high, 0, {}});
    return *this;
}

const FactValue* Fact::find(std::string_view name) const {
    for (const auto& [key, value] : values)
        if (key == name) return &value;
    return nullptr;
}

std::int64_t Fact::integer(std::string_view name) const {
    const auto* v = find(name);
    return v ? v->integer : 0;
}

double Fact::fraction(std::string_view name) const {
    const auto* v = find(name);
    return v ? v->real : 0.0;
}

const std::string& Fact::word(std::string_view name) const {
    static const std::string none;
    const auto* v = find(name);
    return v ? v->text : none;
}

bool Fact::has(std::string_view name) const { return find(name) != nullptr; }

}  // namespace memsnap::analysis
