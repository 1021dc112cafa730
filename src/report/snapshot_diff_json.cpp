#include <memsnap/report/snapshot_diff.hpp>

#include <nlohmann/json.hpp>

#include <cmath>

namespace memsnap::report {

namespace {

// Whole numbers print as integers ("growth exact to the byte"), fractions as doubles.
nlohmann::ordered_json number(double value) {
    if (std::isfinite(value) && std::floor(value) == value && std::abs(value) < 9.0e15)
        return static_cast<std::int64_t>(value);
    return value;
}

nlohmann::ordered_json frame_json(const std::string& filename, std::int64_t line, const std::string& name) {
    return {{"filename", filename}, {"line", line}, {"name", name}};
}

nlohmann::ordered_json diagnosis_json(const analysis::Diagnosis& d) {
    if (d.summary.empty()) return nullptr;
    return {{"pattern", d.pattern}, {"summary", d.summary}, {"fix", d.fix}, {"evidence", d.evidence}};
}

}  // namespace

std::string render_snapshot_diff_json(const analysis::SnapshotDiff& diff,
                                      const DiffRenderOptions& options) {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["kind"] = "snapshot_diff";
    j["before"] = diff.before_file;
    j["after"] = diff.after_file;
    j["steps"] = diff.steps ? nlohmann::ordered_json::array({diff.steps->first, diff.steps->second})
                            : nlohmann::ordered_json(nullptr);
    j["steps_source"] = diff.steps_source;
    j["totals"] = nlohmann::ordered_json::object();
    for (const auto& [name, t] : diff.totals)
        j["totals"][name] = {{"before", t.before},
                             {"after", t.after},
                             {"delta", t.delta},
                             {"per_step", number(t.per_step)}};
    j["verdict"] = analysis::to_string(diff.verdict.verdict);
    j["evidence"] = diff.verdict.evidence;
    j["advice"] = diff.verdict.advice;
    j["diagnosis"] = diagnosis_json(diff.overall);
    j["stacks_recorded"] = diff.stacks_recorded;
    j["blocks"] = {{"live_before", diff.live_blocks_before},
                   {"live_after", diff.live_blocks_after},
                   {"survivors", diff.survivors},
                   {"new", diff.new_blocks},
                   {"gone", diff.gone_blocks}};
    j["pending_free_bytes"] = {{"before", diff.pending_free_before}, {"after", diff.pending_free_after}};
    j["convergence"] = nullptr;
    if (diff.convergence) {
        const auto& c = *diff.convergence;
        j["convergence"] = {{"frame", frame_json(c.frame.filename, c.frame.line, c.frame.name)},
                            {"inclusive_bytes", c.inclusive_bytes},
                            {"exclusive_bytes", c.exclusive_bytes},
                            {"share", number(c.share)},
                            {"sites", c.sites}};
    }
    j["notes"] = diff.notes;
    nlohmann::ordered_json sites = nlohmann::ordered_json::array();
    std::size_t shown = 0;
    for (const auto& s : diff.sites) {
        if (options.top != 0 && shown == options.top) break;
        if (std::abs(s.delta_bytes) < options.min_growth) continue;
        ++shown;
        nlohmann::ordered_json stacks = nlohmann::ordered_json::array();
        for (const auto& st : s.stacks) {
            nlohmann::ordered_json frames = nlohmann::ordered_json::array();
            for (const auto& f : st.frames) frames.push_back(frame_json(f.filename, f.line, f.name));
            stacks.push_back({{"size", st.size},
                              {"delta_blocks", st.delta_blocks},
                              {"delta_bytes", st.delta_bytes},
                              {"frames", frames}});
        }
        sites.push_back({{"rank", s.rank},
                         {"frame", frame_json(s.site.filename, s.site.line, s.site.name)},
                         {"user_code", s.site.user_code},
                         {"before_bytes", s.before_bytes},
                         {"after_bytes", s.after_bytes},
                         {"delta_bytes", s.delta_bytes},
                         {"before_blocks", s.before_blocks},
                         {"after_blocks", s.after_blocks},
                         {"delta_blocks", s.delta_blocks},
                         {"new_blocks", s.new_blocks},
                         {"gone_blocks", s.gone_blocks},
                         {"survivor_blocks", s.survivor_blocks},
                         {"growth_bytes_per_step", number(s.growth_bytes_per_step)},
                         {"share", number(s.share)},
                         {"verdict", analysis::to_string(s.verdict)},
                         {"diagnosis", diagnosis_json(s.diagnosis)},
                         {"stacks", stacks}});
    }
    j["sites"] = sites;
    j["sites_total"] = diff.sites.size();
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace memsnap::report
