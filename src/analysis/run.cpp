#include <memsnap/analysis/run.hpp>
#include <memsnap/analysis/sites/totals.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/parallel.hpp>
#include <memsnap/util/steps.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

namespace memsnap::analysis {

namespace {

std::vector<Input> named(const std::vector<std::string>& names) {
    std::vector<Input> out;
    for (const auto& name : names) out.push_back({name, false});
    return out;
}

// What reading many files gave: a value per file read, and why the others were skipped.
template <class Value>
struct Read {
    std::vector<Value> values;
    Facts skipped;
};

// `work(i)` for every file, one file per core at a time: each worker holds one capture while
// it reduces it, so memory stays near one capture per core. A file found in a directory that
// is not a capture (a README, an expected.json) is skipped with a warning; any other error,
// the first in file order, is thrown once all are done. `emit`, when given, receives each
// value as soon as it and those before it are ready, in file order, and the values it takes
// are not kept; with a `window`, at most that many files are read ahead of the first not yet
// emitted, so that one slow file does not make the others pile up.
template <class Value, class Work, class Emit>
Read<Value> read_each(const std::vector<Input>& files, Work&& work, Emit&& emit, std::size_t window) {
    const std::size_t count = files.size();
    std::vector<std::optional<Value>> slots(count);
    std::vector<std::optional<Fact>> skip_reason(count);
    const auto skip = [&](std::size_t i, const std::string& why) {
        skip_reason[i] = Fact(FactKind::file_skipped).text("file", files[i].path).text("reason", why);
    };
    const auto errors = util::for_each_index_in_order(
        count, window,
        [&](std::size_t i) {
            if (!files[i].skipped.empty()) return skip(i, files[i].skipped);
            try {
                slots[i].emplace(work(i));
            } catch (const Error& e) {
                if (!files[i].in_directory || e.kind() != ErrorKind::input) throw;
                skip(i, e.what());
            }
        },
        [&](std::size_t i) {
            if (slots[i] && emit(files[i], *slots[i])) slots[i].reset();
        });
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    Read<Value> out;
    // Reserved: growing would copy the values read so far (a capture's move may throw, so the
    // vector copies it), and a capture holds the whole model of its file.
    out.values.reserve(count);
    std::size_t read = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (skip_reason[i])
            out.skipped.push_back(std::move(*skip_reason[i]));
        else
            ++read;
        if (slots[i]) out.values.push_back(std::move(*slots[i]));
    }
    if (read == 0) throw input_error("none of the files found is a capture", files.front().path);
    return out;
}

template <class Value, class Work>
Read<Value> read_each(const std::vector<Input>& files, Work&& work) {
    return read_each<Value>(
        files, std::forward<Work>(work), [](const Input&, const Value&) { return false; }, 0);
}

// Files read ahead of the first one not yet written, per thread, when info streams its records.
constexpr std::size_t kStreamWindow = 2;

StackNeed stacks_for(const Request& rq, Command command) {
    return rq.stacks_for ? rq.stacks_for(command) : StackNeed::none;
}

void require_snapshot(const capture::Capture& capture, const std::string& needs) {
    if (!capture.is_snapshot())
        throw usage_error(fmt::format("{}; {} is a {}", needs, capture.path, capture.kind_name()));
}

// A snapshot reduced to its totals, categories and every site (what trend and ranks keep).
SnapshotContents reduce(const capture::Capture& capture, const AnalysisOptions& options) {
    auto every_site = options;
    every_site.top = 0;
    return describe_snapshot(capture.snapshot(), every_site);
}

// The view of a snapshot that has something to draw (segments or a trace).
std::optional<TraceView> view_of(const Request& rq, const capture::Capture& capture, std::optional<int> device) {
    if (!rq.view || !capture.is_snapshot()) return std::nullopt;
    const auto& snap = capture.snapshot();
    if (snap.segments.empty() && snap.events.empty()) return std::nullopt;
    auto options = rq.options;
    if (device) options.device = device;
    return trace_view(snap, options);
}

Result run_info(const Request& rq) {
    const auto files = rq.expand_directories ? capture::expand_inputs(rq.names) : named(rq.names);
    Result out;
    std::optional<StackProfile> stacks;
    std::optional<TraceView> view;
    const auto need = stacks_for(rq, Command::info);
    const bool picture = need == StackNeed::live || need == StackNeed::live_only;
    auto read = read_each<InfoResult>(
        files,
        [&](std::size_t i) -> InfoResult {
            const auto capture = rq.load(files[i]);
            if (picture) {
                require_snapshot(capture, fmt::format("{} needs a snapshot (stacks)", rq.output));
                stacks = live_stacks(capture.snapshot(), rq.options);  // pictures read one file
                if (i == 0) view = view_of(rq, capture, std::nullopt);
                if (need == StackNeed::live_only) return StatsInfo{};
            }
            return info(capture, rq.options);
        },
        [&](const Input& input, const InfoResult& result) {
            if (!rq.on_info) return false;
            rq.on_info(input, result);
            return true;
        },
        rq.on_info ? util::thread_count() * kStreamWindow : 0);
    if (need != StackNeed::live_only) out.value = std::move(read.values);
    out.stacks = std::move(stacks);
    out.view = std::move(view);
    out.warnings = std::move(read.skipped);
    return out;
}

Result run_trace(const Request& rq) {
    const auto capture = rq.load(Input{rq.names.at(0), false});
    require_snapshot(capture, "trace needs a snapshot");
    auto trace = rq.trace;
    const auto need = stacks_for(rq, Command::trace);
    if (need == StackNeed::trace_peak) trace.stacks = TraceOptions::Stacks::peak;
    if (need == StackNeed::trace_end) trace.stacks = TraceOptions::Stacks::end;
    auto result = analyze_trace(capture.snapshot(), rq.options, trace);
    Result out;
    for (const auto& w : capture.snapshot().warnings)
        out.warnings.push_back(Fact(FactKind::reader_warning).text("file", capture.path).text("text", w));
    out.gate = check_gates(result, rq.gates);
    out.stacks = std::move(result.stacks);
    result.stacks.reset();
    out.view = view_of(rq, capture, result.device);
    out.value = std::move(result);
    return out;
}

Result run_trend(const Request& rq);

// What each side's trace adds to a snapshot diff: its peak (replayed as the side was read),
// and the OOMs it records.
void add_traces(const snapshot::Snapshot& before, const snapshot::Snapshot& after,
                std::array<std::optional<Peak>, 2> peaks, SnapshotDiff& diff) {
    // By position, not address: a capture diffed with itself is both sides.
    const std::array sides{&before, &after};
    for (std::size_t i = 0; i < sides.size(); ++i)
        for (const auto& [device, events] : ooms_by_device(*sides[i]))
            diff.headline.push_back(Fact(FactKind::oom_in_capture)
                                        .text("side", i == 0 ? "before" : "after")
                                        .count("device", device)
                                        .count("events", events));
    diff.peak_before = std::move(peaks[0]);
    diff.peak_after = std::move(peaks[1]);
    if (!diff.peak_before || !diff.peak_after || diff.peak_before->bytes == diff.peak_after->bytes) return;
    const bool later = diff.peak_after->bytes > diff.peak_before->bytes;
    const auto& high = later ? *diff.peak_after : *diff.peak_before;
    const auto& low = later ? *diff.peak_before : *diff.peak_after;
    diff.headline.push_back(Fact(FactKind::peak_higher)
                                .text("side", later ? "second" : "first")
                                .bytes("bytes", high.bytes)
                                .bytes("other", low.bytes)
                                .bytes("delta", high.bytes - low.bytes)
                                .count("device", high.device)
                                .count("other_device", low.device));
}

Result run_diff(const Request& rq) {
    if (rq.names.size() > 2) return run_trend(rq);
    if (rq.names.size() != 2) throw usage_error("diff needs two captures (more make a trend)");
    const std::string& before_file = rq.names[0];
    const std::string& after_file = rq.names[1];
    auto options = rq.options;
    options.steps = util::resolve_steps(rq.steps, before_file, after_file);
    const auto need = stacks_for(rq, Command::diff);
    if (need == StackNeed::diff_changed) options.stack_samples = StackSamples::changed;
    if (need == StackNeed::diff_all) options.stack_samples = StackSamples::all;
    // The two files are read concurrently; a log diffed with itself (its series of tables) is
    // read once.
    std::error_code ec;
    const bool same_file =
        before_file != "-" && after_file != "-" && std::filesystem::equivalent(before_file, after_file, ec) && !ec;
    auto inputs = named({before_file});
    if (!same_file) inputs.push_back({after_file, false});
    // Each side's peak is a replay of its own whole trace: replayed by the thread that read the
    // side, as soon as it is read, so that it overlaps the reading of the other side.
    std::array<std::optional<Peak>, 2> peaks;
    auto loaded = read_each<capture::Capture>(inputs, [&](std::size_t i) {
        auto capture = rq.load(inputs[i]);
        if (capture.is_snapshot()) peaks[i] = trace_peak(capture.snapshot(), options);
        return capture;
    });
    if (same_file) peaks[1] = peaks[0];
    const capture::Capture& before = loaded.values[0];
    const capture::Capture& after = same_file ? before : loaded.values[1];
    auto result = diff(before, after, options);
    if (auto* snap = std::get_if<SnapshotDiff>(&result))
        add_traces(before.snapshot(), after.snapshot(), std::move(peaks), *snap);
    Result out;
    out.warnings = warnings_of(result);
    // A log diffed with itself is its series of tables; a snapshot diffed with itself is a slip.
    if (same_file && std::holds_alternative<SnapshotDiff>(result))
        out.warnings.push_back(Fact(FactKind::same_capture).text("file", before_file));
    out.gate = check_gates(result, rq.gates);
    if (options.stack_samples != StackSamples::none)
        if (auto* snap = std::get_if<SnapshotDiff>(&result)) out.stacks = take_diff_stacks(*snap);
    out.view = view_of(rq, after, std::nullopt);
    out.value = std::move(result);
    return out;
}

// Snapshots are reduced as they are read; summaries and stats are small and kept.
struct Reduced {
    std::string file;
    bool in_directory = false;
    std::optional<SnapshotContents> snapshot;
    std::optional<SummarySeriesFile> stats;
};

// A series is of one kind. Files of the other kind that a directory brought in (a summary
// beside the snapshots) are left out and named; files named on the command line are an error.
TrendResult trend_of(std::vector<Reduced> reduced, const Request& rq, const TrendOptions& trend, Facts& skipped) {
    const auto is_snapshot = [](const Reduced& r) { return r.snapshot.has_value(); };
    const auto snapshot_count = std::count_if(reduced.begin(), reduced.end(), is_snapshot);
    const bool keep_snapshots = snapshot_count * 2 >= static_cast<std::ptrdiff_t>(reduced.size());
    const auto other_kind = [&](const Reduced& r) { return is_snapshot(r) != keep_snapshots; };
    if (std::any_of(reduced.begin(), reduced.end(), [&](const Reduced& r) { return other_kind(r) && !r.in_directory; }))
        throw usage_error("trend needs captures of one kind: all snapshots, or memory_summary/memory_stats files");
    for (const auto& r : reduced)
        if (other_kind(r))
            skipped.push_back(Fact(FactKind::file_skipped)
                                  .text("file", r.file)
                                  .text("reason", keep_snapshots ? "a summary or stats file among snapshots"
                                                                 : "a snapshot among summary or stats files"));
    reduced.erase(std::remove_if(reduced.begin(), reduced.end(), other_kind), reduced.end());
    const bool snapshots = keep_snapshots;
    if (snapshots) {
        std::vector<SeriesCapture> series;
        for (auto& r : reduced) series.push_back({r.file, std::move(*r.snapshot)});
        return trend_snapshots(std::move(series), rq.options, trend);
    }
    std::vector<SummarySeriesFile> series;
    for (auto& r : reduced) series.push_back(std::move(*r.stats));
    return trend_stats(series, rq.options, trend);
}

Result run_trend(const Request& rq) {
    const auto files = capture::expand_inputs(rq.names);
    TrendOptions trend;
    trend.warmup = rq.warmup;
    // A file given twice is compared with itself: said, as a diff says it.
    Facts repeated;
    {
        std::map<std::string, std::int64_t> times;
        for (const auto& f : files) {
            std::error_code ec;
            const auto key = f.path == "-" ? f.path : std::filesystem::weakly_canonical(f.path, ec).string();
            ++times[ec ? f.path : key];
        }
        for (const auto& [file, n] : times)
            if (n > 1) repeated.push_back(Fact(FactKind::same_capture).text("file", file).count("times", n));
    }
    // One file may be a log of many tables: its steps are checked against its tables once read.
    const std::size_t given = files.size() == 1
                                  ? static_cast<std::size_t>(std::count(rq.steps.begin(), rq.steps.end(), ',')) + 1
                                  : files.size();
    if (!rq.steps.empty()) trend.steps = util::parse_step_list(rq.steps, given);
    auto read = read_each<Reduced>(files, [&](std::size_t i) {
        Reduced r{files[i].path, files[i].in_directory, std::nullopt, std::nullopt};
        // A text capture's tables are reduced as they are read: a log may hold 300 000.
        SummarySeriesFile figures(files[i].path);
        const stats::TableSink keep = [&figures](stats::StatsTable&& table) { figures.add(table); };
        auto capture = rq.load_tables ? rq.load_tables(files[i], keep) : rq.load(files[i]);
        if (capture.is_snapshot()) {
            r.snapshot = reduce(capture, rq.options);
        } else {
            const auto& text = capture.stats();
            for (const auto& table : text.tables) figures.add(table);  // a loader that kept them
            figures.set_kind(text.kind);
            r.stats = std::move(figures);
        }
        return r;
    });
    if (!trend.steps.empty() && !read.skipped.empty())
        throw usage_error(fmt::format(
            "--steps gives {} steps, but {} of the files found are not captures; name the captures instead of "
            "their directory",
            trend.steps.size(), read.skipped.size()));
    auto result = trend_of(std::move(read.values), rq, trend, read.skipped);
    Result out;
    out.warnings = std::move(read.skipped);
    out.warnings.insert(out.warnings.end(), result.warnings.begin(), result.warnings.end());
    out.warnings.insert(out.warnings.end(), repeated.begin(), repeated.end());
    out.gate = check_gates(result, rq.gates);
    if (stacks_for(rq, Command::trend) == StackNeed::sites) {
        if (result.kind != SeriesKind::snapshot)
            throw usage_error(
                fmt::format("{} needs sites, which summaries and stats do not have: use svg, html or text", rq.output));
        out.stacks = trend_stacks(result);
    }
    out.value = std::move(result);
    return out;
}

Result run_ranks(const Request& rq) {
    const auto files = capture::expand_inputs(rq.names);
    // One capture of several devices: its devices are the ranks (DataParallel replicas).
    if (files.size() == 1 && files[0].skipped.empty() && !rq.options.device) {
        const auto capture = rq.load(files[0]);
        require_snapshot(capture, "ranks needs snapshots");
        const auto devices = devices_of(capture.snapshot());
        if (devices.size() > 1) {
            auto result = compare_ranks(devices_as_ranks(capture.snapshot(), files[0].path, rq.options), rq.options);
            Result out;
            out.warnings = result.warnings;
            if (stacks_for(rq, Command::ranks) == StackNeed::sites) out.stacks = ranks_stacks(result);
            out.value = std::move(result);
            return out;
        }
        // A trace may record devices that hold no memory in the snapshot: they are no ranks.
        std::set<int> traced;
        const auto& events = capture.snapshot().events;
        for (std::size_t i = 0; i < events.size(); ++i) traced.insert(events.device_at(i));
        throw input_error(
            fmt::format("ranks needs two ranks or more: the capture holds memory on {}{}; give one capture per rank",
                        devices.empty() ? std::string("no device") : fmt::format("one device ({})", *devices.begin()),
                        traced.size() > devices.size()
                            ? fmt::format(", though its trace records {} devices", traced.size())
                            : std::string()),
            files[0].path);
    }
    auto read = read_each<RankCapture>(files, [&](std::size_t i) {
        const auto capture = rq.load(files[i]);
        require_snapshot(capture, "ranks needs snapshots");
        auto info = reduce(capture, rq.options);
        auto moment =
            info.oom_events > 0 ? rank_oom_moment(capture.snapshot(), rq.options.device, rq.options) : std::nullopt;
        return RankCapture{util::rank_from_file_name(files[i].path), files[i].path, std::move(info), std::nullopt,
                           std::move(moment)};
    });
    auto result = compare_ranks(std::move(read.values), rq.options);
    Result out;
    out.warnings = std::move(read.skipped);
    out.warnings.insert(out.warnings.end(), result.warnings.begin(), result.warnings.end());
    if (stacks_for(rq, Command::ranks) == StackNeed::sites) out.stacks = ranks_stacks(result);
    out.value = std::move(result);
    return out;
}

}  // namespace

Result run(const Request& request) {
    validate(request.options);
    switch (request.command) {
        case Command::info:
            return run_info(request);
        case Command::diff:
            return run_diff(request);
        case Command::trace:
            return run_trace(request);
        case Command::trend:
            return run_trend(request);
        case Command::ranks:
            return run_ranks(request);
    }
    throw usage_error("unknown command");
}

}  // namespace memsnap::analysis
