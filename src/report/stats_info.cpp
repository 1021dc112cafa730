#include <memsnap/report/stats_info.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>

namespace memsnap::report {

namespace {

nlohmann::json range_json(ByteRange r) { return {{"low", r.low}, {"high", r.high}}; }

nlohmann::json optional_range(const std::optional<ByteRange>& r) {
    return r ? range_json(*r) : nlohmann::json(nullptr);
}

}  // namespace

std::string render_stats_info_json(const stats::StatsCapture& capture) {
    nlohmann::json tables = nlohmann::json::array();
    for (const auto& t : capture.tables) {
        nlohmann::json stats = nlohmann::json::object();
        for (const auto& [key, value] : t.stats) stats[key] = range_json(value);
        tables.push_back({
            {"device", t.device ? nlohmann::json(*t.device) : nlohmann::json(nullptr)},
            {"line", t.line},
            {"layout", t.layout},
            {"num_ooms", optional_range(t.num_ooms)},
            {"num_alloc_retries", optional_range(t.num_alloc_retries)},
            {"stats", std::move(stats)},
            {"warnings", t.warnings},
        });
    }
    nlohmann::json doc = {
        {"schema_version", 1},
        {"kind", std::string(stats::to_string(capture.kind))},
        {"tables", std::move(tables)},
    };
    return doc.dump(2) + "\n";
}

std::string render_stats_info_text(const stats::StatsCapture& capture) {
    static constexpr std::array<std::pair<const char*, const char*>, 5> rows = {{
        {"allocated", "allocated_bytes"},
        {"reserved", "reserved_bytes"},
        {"active", "active_bytes"},
        {"requested", "requested_bytes"},
        {"non-releasable", "inactive_split_bytes"},
    }};
    std::string out = fmt::format("{} capture, {} table(s)\n", stats::to_string(capture.kind), capture.tables.size());
    for (std::size_t i = 0; i < capture.tables.size(); ++i) {
        const auto& t = capture.tables[i];
        out += fmt::format("\ntable {} (line {}): device {}, layout {}\n", i + 1, t.line,
                           t.device ? fmt::format("{}", *t.device) : "unknown", t.layout);
        auto count = [](const std::optional<ByteRange>& r) {
            return r ? stats::format_range(*r, false) : std::string("unknown");
        };
        out += fmt::format("  OOMs: {}, allocation retries: {}\n", count(t.num_ooms), count(t.num_alloc_retries));
        for (const auto& [name, key] : rows) {
            const auto cur = t.stats.find(fmt::format("{}.all.current", key));
            const auto peak = t.stats.find(fmt::format("{}.all.peak", key));
            if (cur == t.stats.end() && peak == t.stats.end()) continue;
            auto show = [&](auto it) {
                return it == t.stats.end() ? std::string("unknown") : stats::format_range(it->second, true);
            };
            out += fmt::format("  {:<15} current {}\n  {:<15} peak    {}\n", name, show(cur), "", show(peak));
        }
        for (const auto* key : {"allocation.all.current", "segment.all.current"}) {
            if (const auto it = t.stats.find(key); it != t.stats.end())
                out += fmt::format("  {:<15} {}\n", key[0] == 'a' ? "allocations" : "segments",
                                   stats::format_range(it->second, false));
        }
        if (!t.warnings.empty()) {
            out += "  warnings:\n";
            for (const auto& w : t.warnings) out += fmt::format("    - {}\n", w);
        }
    }
    return out;
}

}  // namespace memsnap::report
