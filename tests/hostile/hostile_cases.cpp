// The hostile inputs of the robustness issue, one generator each.

#include "hostile.hpp"

#include <fmt/format.h>

#include <map>
#include <sstream>

namespace memsnap::hostile {

namespace {

using Args = std::vector<std::string>;

// Keys the way Python's pickler writes them: the first use memoized, the rest by reference.
class Keys {
  public:
    explicit Keys(PickleWriter& w, std::uint32_t first_index = 1000) : w_(w), next_(first_index) {}
    void operator()(const std::string& key) {
        if (const auto it = index_.find(key); it != index_.end()) {
            w_.binget(it->second);
            return;
        }
        w_.str(key).binput(next_);
        index_[key] = next_++;
    }

  private:
    PickleWriter& w_;
    std::uint32_t next_;
    std::map<std::string, std::uint32_t> index_;
};

std::string text_table(std::int64_t allocated_mib) {
    return fmt::format(
        "|===========================================================================|\n"
        "|                  PyTorch CUDA memory summary, device ID 0                 |\n"
        "|---------------------------------------------------------------------------|\n"
        "|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |\n"
        "|===========================================================================|\n"
        "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
        "|---------------------------------------------------------------------------|\n"
        "| Allocated memory      | {:>6} MiB |   5114 MiB |   5114 MiB |      0 B   |\n"
        "|---------------------------------------------------------------------------|\n"
        "| GPU reserved memory   |   6132 MiB |   6132 MiB |   6132 MiB |      0 B   |\n"
        "|===========================================================================|\n",
        allocated_mib);
}

void shared_segments(const fs::path& file) {
    PickleWriter w;
    w.empty_dict().mark().str("segments").empty_list().mark();
    w.empty_dict().binput(0).mark().str("device").integer(0).str("address").integer(1 << 20);
    w.str("total_size").integer(20000 * 512).str("blocks").empty_list().mark();
    w.empty_dict().binput(1).mark().str("address").integer(1 << 20).str("size").integer(512);
    w.str("state").str("active_allocated").setitems();
    for (int i = 1; i < 20000; ++i) w.binget(1);
    w.appends().setitems();
    for (int i = 1; i < 20000; ++i) w.binget(0);
    w.appends().setitems().stop();
    write(file, w.bytes());
}

void shared_trace(const fs::path& file) {
    PickleWriter w;
    Keys key(w);
    w.empty_dict().mark().str("segments").empty_list().str("device_traces").empty_list().mark();
    w.empty_list().binput(0).mark();
    for (int i = 0; i < 1000; ++i) {
        w.empty_dict().mark();
        key("action");
        key("alloc");
        key("addr");
        w.integer(4096 * i);
        key("size");
        w.integer(512);
        w.setitems();
    }
    w.appends();
    for (int i = 1; i < 100000; ++i) w.binget(0);
    w.appends().setitems().stop();
    write(file, w.bytes());
}

// Trace events cycling through 65000 streams that are multiples of one prime (all in one
// bucket of an unseeded integer hash table of that size) and 40 action names.
void stream_flood(const fs::path& file) {
    PickleWriter w;
    Keys key(w);
    w.empty_dict().mark().str("segments").empty_list().str("device_traces").empty_list().mark();
    w.empty_list().mark();
    for (int i = 0; i < 300000; ++i) {
        w.empty_dict().mark();
        key("action");
        key(fmt::format("action_{}", i % 40));
        key("addr");
        w.integer(4096 * (i % 1000));
        key("size");
        w.integer(512);
        key("stream");
        w.integer(std::int64_t{126271} * (i % 65000));
        w.setitems();
    }
    w.appends().appends().setitems().stop();
    write(file, w.bytes());
}

void many_segments(const fs::path& file, int count, bool one_stack_flood) {
    PickleWriter w;
    Keys key(w);
    w.empty_dict().mark().str("segments").empty_list().mark();
    for (int i = 0; i < count; ++i) {
        const std::int64_t size = 512 * (i + 1);
        const std::int64_t address = one_stack_flood ? 2 * size : (std::int64_t{1} << 32) + std::int64_t{i} * 1024;
        w.empty_dict().mark();
        key("address");
        w.integer(address);
        key("total_size");
        w.integer(one_stack_flood ? size : 512);
        key("blocks");
        w.empty_list().mark().empty_dict().mark();
        key("address");
        w.integer(address);
        key("size");
        w.integer(one_stack_flood ? size : 512);
        key("state");
        key("active_allocated");
        if (one_stack_flood) {
            key("frames");
            w.empty_list().mark();
            if (i == 0) {
                w.empty_dict().binput(1).mark().str("filename").str("/home/u/train.py").str("line").integer(3);
                w.str("name").str("f").setitems();
            } else {
                w.binget(1);
            }
            w.appends();
        }
        w.setitems().appends().setitems();
    }
    w.appends().setitems().stop();
    write(file, w.bytes());
}

void many_sites(const fs::path& file, int count) {
    PickleWriter w;
    Keys key(w);
    w.empty_dict().mark().str("segments").empty_list().mark().empty_dict().mark();
    key("address");
    w.integer(1 << 30);
    key("total_size");
    w.integer(512 * count);
    key("blocks");
    w.empty_list().mark();
    for (int i = 0; i < count; ++i) {
        w.empty_dict().mark();
        key("address");
        w.integer((1 << 30) + 512 * i);
        key("size");
        w.integer(512);
        key("state");
        key("active_allocated");
        key("frames");
        w.empty_list().mark().empty_dict().mark();
        key("filename");
        w.str(fmt::format("/home/u/model_{}.py", i));
        key("line");
        w.integer(i);
        key("name");
        key("forward");
        w.setitems().appends().setitems();
    }
    w.appends().setitems().appends().setitems().stop();
    write(file, w.bytes());
}

std::string repeated(const std::string& unit, std::size_t count) {
    std::string out;
    out.reserve(unit.size() * count);
    for (std::size_t i = 0; i < count; ++i) out += unit;
    return out;
}

// Control characters in every field a report prints.
Spec poisoned() {
    Spec s;
    s.frames = {{"/home/u/\x1b[31mred\x07.py", "f\x1b]0;title\x07g", 7}};
    s.action = "alloc\x1b[2J";
    s.settings_key = "\x1b]0;pwned\x07";
    return s;
}

Args two(const fs::path& d, Spec s, const std::vector<std::string>& options) {
    s.segments = {{4096}};
    write(d / "step1.pickle", snapshot(s));
    s.segments = {{4096, 1 << 20}};
    write(d / "step2.pickle", snapshot(s));
    Args a{"diff"};
    a.insert(a.end(), options.begin(), options.end());
    a.push_back((d / "step1.pickle").string());
    a.push_back((d / "step2.pickle").string());
    return a;
}

std::string folded_lines_are_stacks(const Run& r) {
    std::istringstream in(r.out);
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
        const auto space = line.rfind(' ');
        if (space == std::string::npos || line.find_first_not_of("0123456789", space + 1) != std::string::npos)
            return "a folded line does not end in its byte count: " + line.substr(0, 80);
    }
    return lines == 1 ? "" : fmt::format("{} folded lines where one stack grew", lines);
}

std::string no_wrapped_total(const Run& r) {
    return r.out.find("-2 B") != std::string::npos || r.out.find("-1 B") != std::string::npos
               ? "a total wrapped around to a negative number"
               : "";
}

// The error line holds these words.
std::function<std::string(const Run&)> error_says(std::string words) {
    return [words](const Run& r) {
        return r.err.find(words) != std::string::npos
                   ? ""
                   : "the error does not say '" + words + "': " + r.err.substr(0, 200);
    };
}

}  // namespace

std::vector<Case> more_cases() {
    std::vector<Case> c;
    c.push_back({"shared-segments", "{'segments': [seg] * 20000}, seg['blocks'] = [blk] * 20000 (80 KB)",
                 [](const fs::path& d) {
                     shared_segments(d / "a.pickle");
                     return Args{"info", (d / "a.pickle").string()};
                 }});
    c.push_back({"shared-trace", "one 1000-event trace list shared 100000 times", [](const fs::path& d) {
                     shared_trace(d / "a.pickle");
                     return Args{"info", (d / "a.pickle").string()};
                 }});
    c.push_back(
        {"stream-flood", "300000 trace events over 65000 colliding streams and 40 actions", [](const fs::path& d) {
             stream_flood(d / "a.pickle");
             return Args{"info", (d / "a.pickle").string()};
         }});
    c.push_back({"braces-400k", "400 KB of '{'", [](const fs::path& d) {
                     write(d / "a.txt", std::string(400 << 10, '{'));
                     return Args{"info", (d / "a.txt").string()};
                 }});
    c.push_back({"braces-1m", "1 MB of '{'", [](const fs::path& d) {
                     write(d / "a.txt", std::string(1 << 20, '{'));
                     return Args{"info", (d / "a.txt").string()};
                 }});
    c.push_back({"ordereddict-100k", "100000 x 'OrderedDict('", [](const fs::path& d) {
                     write(d / "a.txt", repeated("OrderedDict(", 100000));
                     return Args{"info", (d / "a.txt").string()};
                 }});
    c.push_back({"hash-flood-diff", "80000 blocks at address 2 x size with one stack, diffed with itself",
                 [](const fs::path& d) {
                     many_segments(d / "a.pickle", 80000, true);
                     return Args{"diff", (d / "a.pickle").string(), (d / "a.pickle").string()};
                 }});
    c.push_back({"memo-gap", "LONG_BINPUT 2^27-1 (20 bytes)", [](const fs::path& d) {
                     write(d / "a.pickle", std::string("\x80\x04]r\xff\xff\xff\x07.", 9));
                     return Args{"info", (d / "a.pickle").string()};
                 }});
    c.push_back({"empty-lists-20m", "20 M EMPTY_LIST", [](const fs::path& d) {
                     write(d / "a.pickle", "\x80\x04" + std::string(20'000'000, ']') + ".");
                     return Args{"info", (d / "a.pickle").string()};
                 }});
    c.push_back({"newlines-100m", "100 MB of newlines", [](const fs::path& d) {
                     write(d / "a.txt", std::string(100 << 20, '\n'));
                     return Args{"info", (d / "a.txt").string()};
                 }});
    c.push_back({"dev-zero", "/dev/zero, an endless input", [](const fs::path&) { return Args{"info", "/dev/zero"}; }});
    c.push_back({"segments-1m", "10^6 segments", [](const fs::path& d) {
                     many_segments(d / "a.pickle", 1'000'000, false);
                     return Args{"info", (d / "a.pickle").string()};
                 }});
    c.push_back({"sites-100k", "100000 distinct sites, diffed with itself", [](const fs::path& d) {
                     many_sites(d / "a.pickle", 100000);
                     return Args{"diff", (d / "a.pickle").string(), (d / "a.pickle").string()};
                 }});
    for (const char* format : {"text", "json", "folded"})
        c.push_back(
            {fmt::format("sites-100k-growing-{}", format),
             "100000 distinct sites that all grow",
             [format](const fs::path& d) {
                 many_sites(d / "step1.pickle", 1);
                 many_sites(d / "step2.pickle", 100000);
                 return Args{"diff", "--format", format, (d / "step1.pickle").string(), (d / "step2.pickle").string()};
             },
             {0}});
    c.push_back({"control-info",
                 "control characters in frames, state, action and settings: info",
                 [](const fs::path& d) {
                     auto s = poisoned();
                     s.segments = {{4096}};
                     write(d / "a.pickle", snapshot(s));
                     return Args{"info", "--top", "0", (d / "a.pickle").string()};
                 },
                 {0},
                 true});
    for (const char* format : {"text", "markdown", "csv"})
        c.push_back({fmt::format("control-diff-{}", format),
                     "control characters in a growing site's frames",
                     [format](const fs::path& d) {
                         return two(d, poisoned(), {"--format", format});
                     },
                     {0},
                     true});
    c.push_back({"control-folded",
                 "a newline and a count in a frame name cannot forge a folded line",
                 [](const fs::path& d) {
                     Spec s;
                     s.frames = {{"/home/u/train.py\n999999999 x;y", "f\n1 2", 7}};
                     return two(d, s, {"--format", "folded"});
                 },
                 {0},
                 true,
                 folded_lines_are_stacks});
    // A bidi override that shows one file name as another, the two code points XML forbids, a
    // C1 control, and a spreadsheet formula: each writer shows them as "<U+202E>" (its own
    // escaping on top) and no CSV cell starts a formula.
    for (const char* format : {"text", "markdown", "csv", "html", "svg", "dot", "folded"})
        c.push_back(
            {fmt::format("names-code-points-{}", format),
             "bidi, U+FFFE/U+FFFF, C1 and =HYPERLINK in names",
             [format](const fs::path& d) {
                 Spec s;
                 s.frames = {{"=HYPERLINK(\"http://x\")/train.py", "f\u202Eyp.ledom\uFFFE\uFFFF\u0085\u2066g", 7}};
                 s.segments = {{4096}};
                 write(d / "step1.pickle", snapshot(s));
                 s.segments = {{4096, 64 << 20}};  // growth past the noise floor: the site is listed
                 write(d / "step2.pickle", snapshot(s));
                 return Args{"diff", "--format", format, (d / "step1.pickle").string(), (d / "step2.pickle").string()};
             },
             {0},
             true,
             [csv = std::string(format) == "csv"](const Run& r) -> std::string {
                 for (const char* hidden : {"\u202E", "\uFFFE", "\uFFFF", "\u0085", "\u2066"})
                     if (r.out.find(hidden) != std::string::npos) return "a hidden code point reached the output";
                 if (r.out.find("U+202E") == std::string::npos) return "U+202E is not shown";
                 for (const char* formula : {",=", "\n=", "\"="})
                     if (csv && (r.out.find(formula) != std::string::npos || r.out.rfind("=", 0) == 0))
                         return "a CSV cell starts a formula";
                 return "";
             }});
    c.push_back({"control-error",
                 "control characters in a missing file's name reach the error line escaped",
                 [](const fs::path& d) {
                     return Args{"info", (d / "missing\x1b[31m\x07.pickle").string()};
                 },
                 {2},
                 true});
    c.push_back({"int64-max-segments",
                 "two segments of INT64_MAX bytes",
                 [](const fs::path& d) {
                     Spec s;
                     s.segments = {{INT64_MAX}, {INT64_MAX}};
                     write(d / "a.pickle", snapshot(s));
                     return Args{"info", (d / "a.pickle").string()};
                 },
                 {0, 2},
                 false,
                 no_wrapped_total});
    c.push_back({"size-2-64",
                 "a block of 2^64 - 1 bytes (LONG1)",
                 [](const fs::path& d) {
                     PickleWriter w;
                     w.empty_dict().mark().str("segments").empty_list().mark().empty_dict().mark();
                     w.str("address").integer(0).str("total_size").long1(std::string(8, '\xff') + '\0');
                     w.str("blocks").empty_list().mark().empty_dict().mark().str("size").long1(std::string(8, '\xff') +
                                                                                               '\0');
                     w.str("state").str("active_allocated").setitems().appends().setitems().appends().setitems().stop();
                     write(d / "a.pickle", w.bytes());
                     return Args{"info", (d / "a.pickle").string()};
                 },
                 {0, 2},
                 false,
                 no_wrapped_total});
    c.push_back({"negative-sizes",
                 "negative block sizes and a block larger than its segment",
                 [](const fs::path& d) {
                     Spec s;
                     s.segments = {{-4096, 8192}};
                     write(d / "a.pickle", snapshot(s));
                     return Args{"info", (d / "a.pickle").string()};
                 },
                 {0, 2},
                 false,
                 no_wrapped_total});
    c.push_back({"device-2-40",
                 "a segment on device 2^40",
                 [](const fs::path& d) {
                     Spec s;
                     s.segments = {{4096}};
                     s.device = std::int64_t{1} << 40;
                     write(d / "a.pickle", snapshot(s));
                     return Args{"info", (d / "a.pickle").string()};
                 },
                 {2}});
    c.push_back({"deep-json",
                 "JSON nested 40000 deep with --max-depth 1000000",
                 [](const fs::path& d) {
                     write(d / "a.json", "{\"segments\": " + std::string(40000, '[') + std::string(40000, ']') + "}");
                     return Args{"--max-depth", "1000000", "info", (d / "a.json").string()};
                 },
                 {1, 2}});
    // 70 000 nested lists: past a 16-bit depth counter.
    const auto deep_pickle = [](const fs::path& d) {
        std::string bytes = "\x80\x04";
        for (int i = 0; i < 70000; ++i) bytes += "](";
        bytes += "]";
        for (int i = 0; i < 70000; ++i) bytes += "e";
        write(d / "a.pickle", bytes + ".");
    };
    c.push_back({"deep-pickle-70k",
                 "a pickle nested 70000 deep",
                 [deep_pickle](const fs::path& d) {
                     deep_pickle(d);
                     return Args{"info", (d / "a.pickle").string()};
                 },
                 {2},
                 false,
                 error_says("--max-depth")});
    c.push_back({"deep-pickle-65536",
                 "a pickle nested 70000 deep with --max-depth 65536",
                 [deep_pickle](const fs::path& d) {
                     deep_pickle(d);
                     return Args{"--max-depth", "65536", "info", (d / "a.pickle").string()};
                 },
                 {1},
                 false,
                 error_says("not in range 1 to 1000")});
    c.push_back({"steps-20-digits",
                 "--steps 0,99999999999999999999",
                 [](const fs::path& d) {
                     Spec s;
                     s.segments = {{4096}};
                     write(d / "a.pickle", snapshot(s));
                     return Args{"diff", "--steps", "0,99999999999999999999", (d / "a.pickle").string(),
                                 (d / "a.pickle").string()};
                 },
                 {1},
                 false,
                 error_says("at most 19 digits")});
    c.push_back({"summary-bad-utf8-json",
                 "a 0xFF byte in a summary, as JSON",
                 [](const fs::path& d) {
                     write(d / "a.txt", "note \xff\xfe here\n" + text_table(5114));
                     return Args{"info", "--format", "json", (d / "a.txt").string()};
                 },
                 {0}});
    c.push_back({"summary-after-bel",
                 "a BEL byte before a summary table",
                 [](const fs::path& d) {
                     write(d / "a.txt", "\x07" + text_table(5114));
                     return Args{"info", (d / "a.txt").string()};
                 },
                 {0}});
    // Numbers that would overflow int64 arithmetic: refused, clamped or a usage error, never
    // wrapped into a wrong report.
    const auto huge_trace = [](const fs::path& d, const std::string& alloc, const std::string& free) {
        const std::int64_t big = std::int64_t{1} << 62, at = std::int64_t{1} << 32;
        const auto ev = [](const std::string& action, std::int64_t addr, std::int64_t size, int time) {
            return fmt::format(
                R"({{"action": "{}", "addr": {}, "size": {}, "stream": 0, "time_us": {}, "frames": []}})", action, addr,
                size, time);
        };
        write(
            d / "a.json",
            fmt::format(R"({{"segments": [{{"device": 0, "address": 139637976727552, "total_size": 4096, "stream": 0, )"
                        R"("segment_type": "large", "blocks": [{{"address": 139637976727552, "size": 4096, )"
                        R"("requested_size": 4096, "state": "active_allocated", "frames": []}}]}}], )"
                        R"("device_traces": [[{}, {}, {}, {}]]}})",
                        ev(alloc, at, big, 1), ev(alloc, at + big, big, 2), ev(free, at, big, 3),
                        ev(free, at + big, big, 4)));
        return Args{"trace", (d / "a.json").string()};
    };
    c.push_back({"trace-allocs-2-62",
                 "a trace of two live allocations of 2^62 bytes",
                 [huge_trace](const fs::path& d) { return huge_trace(d, "alloc", "free_completed"); },
                 {2},
                 false,
                 error_says("overflow 64 bits")});
    c.push_back({"trace-segments-2-62",
                 "a trace of two segments of 2^62 bytes",
                 [huge_trace](const fs::path& d) { return huge_trace(d, "segment_alloc", "segment_free"); },
                 {2},
                 false,
                 error_says("overflow 64 bits")});
    c.push_back(
        {"stats-int64-min",
         "memory_stats with allocated_bytes.all.current = INT64_MIN",
         [](const fs::path& d) {
             write(d / "a.json", R"({"allocated_bytes.all.current": -9223372036854775808, )"
                                 R"("allocated_bytes.all.peak": 1024, "reserved_bytes.all.current": 2048, )"
                                 R"("oversize_allocations.current": 0, "num_ooms": -1})");
             return Args{"info", (d / "a.json").string()};
         },
         {0},
         false,
         [](const Run& r) { return r.out.find("-8.00 EiB") != std::string::npos ? "a negative value was kept" : ""; }});
    c.push_back({"steps-int64-edges",
                 "--steps -2^63,2^63-1",
                 [](const fs::path& d) {
                     Spec s;
                     s.segments = {{4096}};
                     write(d / "a.pickle", snapshot(s));
                     write(d / "b.pickle", snapshot(s));
                     return Args{"diff", "--steps", "-9223372036854775808,9223372036854775807",
                                 (d / "a.pickle").string(), (d / "b.pickle").string()};
                 },
                 {1},
                 false,
                 error_says("more than 2^63 apart")});
    return c;
}

}  // namespace memsnap::hostile
