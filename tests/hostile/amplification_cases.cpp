// Hostile inputs that make a small file describe a lot: one long string or one stack shared
// by many records, side tables with many entries, and text that makes a warning or a table
// per line. Each was found to cost far more time or memory than its size before it was fixed.

#include "hostile.hpp"

#include <fmt/format.h>

namespace memsnap::hostile {

namespace {

using Args = std::vector<std::string>;

// Memo slots for the keys every generator below uses.
enum Memo : std::uint32_t {
    k_size = 1,
    k_state,
    k_active,
    k_frames,
    k_requested,
    k_address,
    k_filename,
    k_name,
    k_line,
    k_action,
    k_addr,
    k_device,
    k_total,
    k_blocks,
    k_inactive,
    k_first_free
};

// PROTO, then the keys memoized and popped.
PickleWriter with_keys() {
    PickleWriter w;
    const std::pair<Memo, const char*> keys[] = {{k_size, "size"},
                                                 {k_state, "state"},
                                                 {k_active, "active_allocated"},
                                                 {k_frames, "frames"},
                                                 {k_requested, "requested_size"},
                                                 {k_address, "address"},
                                                 {k_filename, "filename"},
                                                 {k_name, "name"},
                                                 {k_line, "line"},
                                                 {k_action, "action"},
                                                 {k_addr, "addr"},
                                                 {k_device, "device"},
                                                 {k_total, "total_size"},
                                                 {k_blocks, "blocks"},
                                                 {k_inactive, "inactive"}};
    for (const auto& [slot, key] : keys) w.str(key).binput(slot).op('0');
    return w;
}

// A frame dict whose file name and function name are memo slots.
void frame_ref(PickleWriter& w, std::uint32_t filename, std::uint32_t name, std::int64_t line) {
    w.empty_dict()
        .mark()
        .binget(k_filename)
        .binget(filename)
        .binget(k_name)
        .binget(name)
        .binget(k_line)
        .integer(line)
        .setitems();
}

// {'segments': [one segment of `total` bytes at `base` holding the blocks `body` writes]}.
template <class Body>
std::string one_segment(PickleWriter w, std::int64_t base, std::int64_t total, Body&& body) {
    w.empty_dict().mark().str("segments").empty_list().mark();
    w.empty_dict().mark().binget(k_device).integer(0).binget(k_address).integer(base).binget(k_total).integer(total);
    w.binget(k_blocks).empty_list().mark();
    body(w);
    w.appends().setitems().appends().setitems().stop();
    return w.bytes();
}

void live_block(PickleWriter& w, std::int64_t address, std::int64_t size, const std::function<void()>& frames) {
    w.empty_dict()
        .mark()
        .binget(k_size)
        .integer(size)
        .binget(k_state)
        .binget(k_active)
        .binget(k_requested)
        .integer(size);
    w.binget(k_address).integer(address).binget(k_frames);
    frames();
    w.setitems();
}

// A near-empty capture to diff against.
std::string empty_capture() {
    return one_segment(with_keys(), std::int64_t{1} << 40, 512, [](PickleWriter& w) {
        w.empty_dict()
            .mark()
            .binget(k_size)
            .integer(512)
            .binget(k_state)
            .binget(k_inactive)
            .binget(k_frames)
            .empty_list();
        w.binget(k_address).integer(std::int64_t{1} << 40).setitems();
    });
}

// One stack of `depth` frames, memoized in slot k_first_free + 1, shared by `blocks` live
// blocks of distinct sizes.
std::string shared_stack(int depth, int blocks) {
    PickleWriter w = with_keys();
    w.str("/home/u/proj/train.py").binput(k_first_free + 2).op('0').str("forward").binput(k_first_free + 3).op('0');
    frame_ref(w, k_first_free + 2, k_first_free + 3, 10);
    w.binput(k_first_free).op('0');
    w.empty_list().mark();
    for (int i = 0; i < depth; ++i) w.binget(k_first_free);
    w.appends().binput(k_first_free + 1).op('0');
    const std::int64_t base = std::int64_t{1} << 40;
    std::int64_t total = 0;
    for (int k = 0; k < blocks; ++k) total += 512 * (k + 1);
    return one_segment(w, base, total, [&](PickleWriter& out) {
        std::int64_t at = base;
        for (int k = 0; k < blocks; ++k) {
            live_block(out, at, 512 * (k + 1), [&] { out.binget(k_first_free + 1); });
            at += 512 * (k + 1);
        }
    });
}

// `blocks` live blocks, each with a stack of its own: a frame of its own, then `depth` - 1
// references to one shared frame whose file name is `filename_length` bytes long.
std::string distinct_stacks(int depth, int blocks, std::size_t filename_length) {
    PickleWriter w = with_keys();
    const std::string file =
        "/home/u/proj/" + std::string(filename_length > 16 ? filename_length - 16 : 0, 'x') + ".py";
    w.str(file).binput(k_first_free + 1).op('0').str("forward").binput(k_first_free + 2).op('0');
    w.str("step").binput(k_first_free + 3).op('0');
    frame_ref(w, k_first_free + 1, k_first_free + 2, 10);
    w.binput(k_first_free).op('0');
    const std::int64_t base = std::int64_t{1} << 40;
    return one_segment(w, base, std::int64_t{4096} * blocks, [&](PickleWriter& out) {
        for (int k = 0; k < blocks; ++k)
            live_block(out, base + std::int64_t{4096} * k, 4096, [&] {
                out.empty_list().mark();
                frame_ref(out, k_first_free + 1, k_first_free + 3, k + 1);
                for (int i = 1; i < depth; ++i) out.binget(k_first_free);
                out.appends();
            });
    });
}

// `blocks` live blocks whose stacks share `shared` frames, each named by `name_length`
// bytes memoized once, under an outer frame of their own: a flame graph of every path would
// be blocks x shared boxes, each titled with a long name (1 MB became a 1.6 GB SVG).
std::string shared_long_frames_distinct_outer(int shared, int blocks, std::size_t name_length) {
    PickleWriter w = with_keys();
    const std::uint32_t file = k_first_free, outer = k_first_free + 1;
    const auto frame_slot = [](int i) {
        return static_cast<std::uint32_t>(k_first_free + 2 + 2 * static_cast<std::uint32_t>(i));
    };
    w.str("/home/u/proj/model.py").binput(file).op('0');
    for (int i = 0; i < shared; ++i) {
        w.str(fmt::format("f{}_{}", i, std::string(name_length, 'n'))).binput(frame_slot(i) + 1).op('0');
        frame_ref(w, file, frame_slot(i) + 1, i + 1);
        w.binput(frame_slot(i)).op('0');
    }
    const std::int64_t base = std::int64_t{1} << 40;
    return one_segment(w, base, std::int64_t{4096} * blocks, [&](PickleWriter& out) {
        for (int k = 0; k < blocks; ++k)
            live_block(out, base + std::int64_t{4096} * k, 4096, [&] {
                out.empty_list().mark();
                for (int i = 0; i < shared; ++i) out.binget(frame_slot(i));
                out.str(fmt::format("outer{}", k)).binput(outer).op('0');
                frame_ref(out, file, outer, k + 1);
                out.appends();
            });
    });
}

// One long string, memoized once, used by `count` records: the file name of a stack shared
// by every live block ("site"), the state of every block ("state"), or the action of every
// trace event ("action").
std::string long_string_records(const std::string& mode, std::size_t length, int count) {
    PickleWriter w = with_keys();
    const std::string text = mode == "site" ? "/home/u/" + std::string(length, 'a') + ".py" : std::string(length, 'x');
    w.str(text).binput(k_first_free).op('0').str("f").binput(k_first_free + 1).op('0');
    w.empty_list().mark();
    frame_ref(w, mode == "site" ? k_first_free : k_first_free + 1, k_first_free + 1, 1);
    w.appends().binput(k_first_free + 2).op('0');
    const std::int64_t base = std::int64_t{1} << 40;
    const int blocks = mode == "action" ? 1 : count;
    w.empty_dict().mark().str("segments").empty_list().mark();
    w.empty_dict().mark().binget(k_device).integer(0).binget(k_address).integer(base).binget(k_total).integer(512 *
                                                                                                              blocks);
    w.binget(k_blocks).empty_list().mark();
    for (int k = 0; k < blocks; ++k) {
        w.empty_dict().mark().binget(k_size).integer(512).binget(k_state);
        w.binget(mode == "state" ? k_first_free : k_active);
        w.binget(k_address).integer(base + 512 * k).binget(k_frames).binget(k_first_free + 2).setitems();
    }
    w.appends().setitems().appends();
    if (mode == "action") {
        w.str("device_traces").empty_list().mark().empty_list().mark();
        for (int k = 0; k < count; ++k)
            w.empty_dict().mark().binget(k_action).binget(k_first_free).binget(k_addr).integer(4096).setitems();
        w.appends().appends();
    }
    w.setitems().stop();
    return w.bytes();
}

// One file name of `length` bytes shared by `frames` frames that differ by line.
std::string long_filename(std::size_t length, int frames, bool backslashes) {
    PickleWriter w = with_keys();
    std::string file = "/home/u/";
    while (file.size() + 4 < length) file += backslashes ? "a\\" : "a/";
    file += "m.py";
    w.str(file).binput(k_first_free).op('0').str("f").binput(k_first_free + 1).op('0');
    const std::int64_t base = std::int64_t{1} << 40;
    return one_segment(w, base, 1 << 20, [&](PickleWriter& out) {
        live_block(out, base, 1 << 20, [&] {
            out.empty_list().mark();
            for (int k = 0; k < frames; ++k) frame_ref(out, k_first_free, k_first_free + 1, k);
            out.appends();
        });
    });
}

// `distinct` file names of `length` bytes, used in turn by `frames` frames.
std::string interned_in_turn(int distinct, std::size_t length, int frames) {
    PickleWriter w = with_keys();
    for (int j = 0; j < distinct; ++j)
        w.str(fmt::format("/home/u/{:05}{}.py", j, std::string(length, 'a')))
            .binput(k_first_free + 1 + static_cast<std::uint32_t>(j))
            .op('0');
    w.str("f").binput(k_first_free).op('0');
    const std::int64_t base = std::int64_t{1} << 40;
    return one_segment(w, base, 4096, [&](PickleWriter& out) {
        live_block(out, base, 4096, [&] {
            out.empty_list().mark();
            for (int k = 0; k < frames; ++k)
                frame_ref(out, k_first_free + 1 + static_cast<std::uint32_t>(k % distinct), k_first_free, 1);
            out.appends();
        });
    });
}

// A stack written as a list literal of `count` references to one frame.
std::string literal_stack(int count) {
    PickleWriter w = with_keys();
    w.str("/home/u/train.py").binput(k_first_free + 1).op('0').str("f").binput(k_first_free + 2).op('0');
    frame_ref(w, k_first_free + 1, k_first_free + 2, 1);
    w.binput(k_first_free).op('0');
    const std::int64_t base = std::int64_t{1} << 40;
    return one_segment(w, base, 1 << 20, [&](PickleWriter& out) {
        live_block(out, base, 1 << 20, [&] {
            out.empty_list().mark();
            for (int k = 0; k < count; ++k) out.binget(k_first_free);
            out.appends();
        });
    });
}

// allocator_settings of `count` entries: one memoized key given again and again, each
// pointing to one memoized value (a list of `list_length` ints, or the int 1).
std::string settings(int count, int list_length) {
    PickleWriter w = with_keys();
    w.str("k").binput(k_first_free).op('0');
    if (list_length > 0) {
        w.empty_list().mark();
        for (int i = 0; i < list_length; ++i) w.integer(1);
        w.appends().binput(k_first_free + 1).op('0');
    }
    w.empty_dict().mark().str("segments").empty_list().str("allocator_settings").empty_dict().mark();
    for (int i = 0; i < count; ++i) {
        w.binget(k_first_free);
        if (list_length > 0)
            w.binget(k_first_free + 1);
        else
            w.integer(1);
    }
    w.setitems().setitems().stop();
    return w.bytes();
}

// `count` segments, each on a device of its own.
std::string many_devices(int count) {
    PickleWriter w = with_keys();
    w.empty_dict().mark().str("segments").empty_list().mark();
    for (int k = 0; k < count; ++k) {
        w.empty_dict().mark().binget(k_device).integer(k).binget(k_address).integer((std::int64_t{1} << 40) + k * 4096);
        w.binget(k_total).integer(512).binget(k_blocks).empty_list().mark();
        w.empty_dict().mark().binget(k_size).integer(512).binget(k_state).binget(k_inactive).setitems();
        w.appends().setitems();
    }
    w.appends().setitems().stop();
    return w.bytes();
}

std::string repeat(std::string_view unit, std::size_t count) {
    std::string out;
    out.reserve(unit.size() * count);
    for (std::size_t i = 0; i < count; ++i) out += unit;
    return out;
}

// A trace for `memsnap trace`: `sites` allocations, each with a stack of its own (file name
// m<k>.py), spread over `iterations` ProfilerStep annotations, then `ooms` out-of-memory
// events. Sites times iterations, and OOMs times live allocations, are far more than the file.
std::string trace_flood(int sites, int iterations, int ooms) {
    PickleWriter w = with_keys();
    w.str("f").binput(k_first_free).op('0').str("stream").binput(k_first_free + 1).op('0');
    w.str("time_us").binput(k_first_free + 2).op('0').str("alloc").binput(k_first_free + 3).op('0');
    w.str("oom").binput(k_first_free + 4).op('0').str("/home/u/train.py").binput(k_first_free + 5).op('0');
    const std::int64_t base = std::int64_t{1} << 40;
    w.empty_dict().mark().str("segments").empty_list();
    w.str("device_traces").empty_list().mark().empty_list().mark();
    std::int64_t time = 0;
    for (int k = 0; k < sites; ++k) {
        w.empty_dict().mark().binget(k_action).binget(k_first_free + 3).binget(k_addr).integer(base + 512 * k);
        w.binget(k_size).integer(512).binget(k_first_free + 1).integer(0).binget(k_first_free + 2).integer(time++);
        w.binget(k_frames).empty_list().mark();
        w.empty_dict()
            .mark()
            .binget(k_filename)
            .str(fmt::format("/home/u/m{}.py", k))
            .binget(k_name)
            .binget(k_first_free);
        w.binget(k_line).integer(1).setitems().appends().setitems();
    }
    for (int k = 0; k < ooms; ++k) {
        w.empty_dict().mark().binget(k_action).binget(k_first_free + 4).binget(k_addr).integer(0);
        w.binget(k_size).integer(std::int64_t{1} << 30).binget(k_first_free + 1).integer(0);
        w.binget(k_first_free + 2).integer(time++).binget(k_frames).empty_list().mark();
        frame_ref(w, k_first_free + 5, k_first_free, 1);
        w.appends().setitems();
    }
    w.appends().appends();
    w.str("external_annotations").empty_list().mark();
    for (int k = 0; k < iterations; ++k) {
        w.empty_dict().mark().str("stage").str("START").str("name").str(fmt::format("ProfilerStep#{}", k));
        w.binget(k_device)
            .integer(0)
            .binget(k_first_free + 2)
            .integer(std::int64_t{k} * sites / std::max(1, iterations));
        w.setitems();
    }
    w.appends().setitems().stop();
    return w.bytes();
}

const std::string kRow = "|Allocated memory|1 B|1 B|1 B|1 B|\n";

Case info_case(std::string name, std::string what, std::function<std::string()> make, std::set<int> exits = {0, 2}) {
    return {std::move(name), std::move(what),
            [make = std::move(make)](const fs::path& d) {
                write(d / "a.in", make());
                return Args{"info", (d / "a.in").string()};
            },
            std::move(exits)};
}

Case diff_case(std::string name, std::string what, std::function<std::string()> before,
               std::function<std::string()> after, std::vector<std::string> options = {}) {
    return {std::move(name), std::move(what),
            [before = std::move(before), after = std::move(after), options](const fs::path& d) {
                write(d / "before.in", before());
                write(d / "after.in", after());
                Args args{"diff"};
                args.insert(args.end(), options.begin(), options.end());
                args.push_back((d / "before.in").string());
                args.push_back((d / "after.in").string());
                return args;
            }};
}

}  // namespace

std::vector<Case> amplification_cases() {
    std::vector<Case> c;
    c.push_back(info_case("stats-key-parens", "a memory_stats key of 50000 nested '(' (stack depth)",
                          [] { return "{\"allocated_bytes.all.current\": 1, " + std::string(50000, '(') + "\n"; },
                          {0, 2}));
    c.push_back(diff_case(
        "settings-same-key", "50000 allocator_settings entries of one key, diffed with itself",
        [] { return settings(50000, 0); }, [] { return settings(50000, 0); }));
    c.push_back(info_case("settings-fan-out", "10000 allocator_settings entries sharing one list of 19000 ints",
                          [] { return settings(10000, 19000); }));
    c.push_back(info_case("long-filename", "a 1 MB file name shared by 1000 frames",
                          [] { return long_filename(1 << 20, 1000, false); }));
    c.push_back(diff_case(
        "long-filename-diff", "a 1 MB file name shared by 1000 frames, diffed with itself",
        [] { return long_filename(1 << 20, 1000, false); }, [] { return long_filename(1 << 20, 1000, false); }));
    c.push_back(info_case("long-filename-backslashes", "a 2 MB Windows file name shared by 150 frames",
                          [] { return long_filename(2 << 20, 150, true); }));
    for (const char* mode : {"site", "state", "action"})
        c.push_back(info_case(fmt::format("long-string-{}", mode),
                              fmt::format("a 1 MB string as the {} of 100000 records", mode),
                              [mode] { return long_string_records(mode, 1 << 20, 100000); }));
    c.push_back(info_case("names-in-turn", "300 file names of 100 KB used in turn by 100000 frames",
                          [] { return interned_in_turn(300, 100000, 100000); }));
    c.push_back(info_case("list-literal-5m", "a stack of 5 million references to one frame",
                          [] { return literal_stack(5'000'000); }));
    c.push_back(diff_case("shared-stack-groups", "4000 block sizes sharing one 4000-frame stack", empty_capture,
                          [] { return shared_stack(4000, 4000); }));
    for (const char* format : {"text", "json", "folded", "svg", "dot", "html", "pprof"}) {
        c.push_back(diff_case(fmt::format("distinct-stacks-{}", format),
                              "10000 blocks with 1000-frame stacks of their own", empty_capture,
                              [] { return distinct_stacks(1000, 10000, 40); }, {"--format", format}));
        c.back().format_variant = std::string_view(format) != "text";
    }
    c.push_back(diff_case("distinct-stacks-long-names", "5000 distinct 1000-frame stacks, 300-byte file name",
                          empty_capture, [] { return distinct_stacks(1000, 5000, 300); }, {"--format", "json"}));
    c.push_back(info_case("snapshot-devices", "65535 segments on a device each", [] { return many_devices(65535); }));
    c.push_back(info_case("stats-flat", "50 MB of a flat memory_stats dict of 1:1 entries",
                          [] { return "{" + repeat("1:1,", 12'500'000) + "}"; }));
    c.push_back(info_case("stats-deep", "a memory_stats dict 60 deep holding 1.7 million entries", [] {
        return "{\"allocated_bytes.all.current\": 1, " + repeat("\"k\":{", 60) + repeat("\"a\":1,", 1'700'000) +
               "\"a\":1" + std::string(60, '}') + "}\n";
    }));
    struct Flood {
        const char* name;
        std::string line;
        std::size_t count;
        const char* what;
    };
    const Flood floods[] = {{"rows", "||||\n", 2'500'000, "2.5 million empty rows after a summary row"},
                            {"dots", "...\n", 2'500'000, "2.5 million elision lines after a summary row"},
                            {"tables", kRow, 300'000, "300000 repeated rows, each a table of its own"}};
    for (const auto& f : floods) {
        const auto text = [line = f.line, count = f.count] { return kRow + repeat(line, count); };
        c.push_back(info_case(fmt::format("summary-{}", f.name), f.what, text));
        c.push_back({fmt::format("summary-{}-diff", f.name), std::string(f.what) + ", the log diffed with itself",
                     [text](const fs::path& d) {
                         write(d / "train.log", text());
                         return Args{"diff", (d / "train.log").string(), (d / "train.log").string()};
                     }});
    }
    // A series log: trend keeps each table's figures, never the tables (nor a row of output per
    // table in memory).
    for (const char* format : {"text", "json"}) {
        c.push_back({fmt::format("summary-tables-trend-{}", format), "300000 one-row tables of one log as a series",
                     [format](const fs::path& d) {
                         write(d / "train.log", kRow + repeat(kRow, 300'000));
                         return Args{"trend", "--format", format, (d / "train.log").string()};
                     }});
        c.back().format_variant = std::string_view(format) != "text";
    }
    const auto trace_case = [](std::string name, std::string what, int sites, int iterations, int ooms,
                               const char* format) {
        return Case{std::move(name), std::move(what), [=](const fs::path& d) {
                        write(d / "trace.in", trace_flood(sites, iterations, ooms));
                        return Args{"trace", "--top", "0", "--format", format, (d / "trace.in").string()};
                    }};
    };
    c.push_back(trace_case("trace-oom-flood", "20000 live allocations of their own stacks, then 20000 OOM events",
                           20000, 0, 20000, "json"));
    c.push_back(trace_case("trace-sites-by-iterations", "90000 sites of one allocation each over 3000 iterations",
                           90000, 3000, 0, "json"));
    c.push_back(trace_case("trace-sites-by-iterations-text", "the same in text", 90000, 3000, 0, "text"));
    c.push_back(trace_case("trace-sites-by-iterations-perfetto", "the same for Perfetto", 90000, 3000, 0, "perfetto"));
    c.push_back(trace_case("trace-oom-flood-perfetto", "the OOM flood for Perfetto", 20000, 0, 20000, "perfetto"));
    c.push_back(info_case("trace-oom-flood-info", "info of 20000 live allocations and 20000 OOM events",
                          [] { return trace_flood(20000, 0, 20000); }));
    for (const char* format : {"svg", "html", "dot"}) {
        c.push_back({fmt::format("info-distinct-stacks-{}", format),
                     "info pictures of 10000 distinct 1000-frame stacks", [format](const fs::path& d) {
                         write(d / "a.in", distinct_stacks(1000, 10000, 40));
                         return Args{"info", "--format", format, (d / "a.in").string()};
                     }});
        c.back().format_variant = std::string_view(format) != "svg";
    }
    for (const char* format : {"svg", "html"}) {
        Case picture{fmt::format("picture-long-shared-frames-{}", format),
                     "3900 blocks under outer frames of their own sharing 51 frames of 4000-byte names",
                     [format](const fs::path& d) {
                         write(d / "a.in", shared_long_frames_distinct_outer(51, 3900, 4000));
                         return Args{"info", "--format", format, (d / "a.in").string()};
                     },
                     {0}};
        // Pictures stay under 32 MiB and say what their budget left out.
        picture.extra = [](const Run& r) -> std::string {
            if (r.out.size() > (std::size_t{32} << 20)) return fmt::format("{} bytes of output", r.out.size());
            if (r.out.find("Picture budget") == std::string::npos) return "no picture budget stated";
            return "";
        };
        c.push_back(std::move(picture));
    }
    c.push_back(info_case("html-page-base64", "a _memory_viz.py page whose base64 is 5 MB of 'A'", [] {
        return "<!DOCTYPE html><script>const local_files = [{\"name\": \"snapshot.pickle\", \"base64\": \"" +
               std::string(5 << 20, 'A') + "\"}]</script>";
    }));
    c.push_back(info_case("html-page-unterminated", "a page whose base64 string never ends",
                          [] { return "<html>\"base64\": \"gASV" + std::string(1 << 20, 'Q'); }));
    c.push_back(info_case("summary-devices", "100000 one-row tables of 100000 devices",
                          [] {
                              std::string out;
                              for (int k = 0; k < 100000; ++k)
                                  out += fmt::format("memory summary, device ID {}\n{}\n", k, kRow);
                              return out;
                          },
                          {2}));
    return c;
}

}  // namespace memsnap::hostile
