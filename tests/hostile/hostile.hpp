#pragma once
// Shared by the hostile-input harness: a case, and writers of snapshot pickles.

#include "pickle_writer.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace memsnap::hostile {

namespace fs = std::filesystem;

struct Run {
    int exit_code = -1;
    int signal = 0;
    double seconds = 0;      // wall-clock time
    double cpu_seconds = 0;  // user + system CPU time of the process (rusage)
    bool timed_out = false;  // killed at the wall-clock limit
    double peak_mb = 0;
    bool peak_is_bound = false;  // peak_mb is an upper bound: the run was too short to sample
    std::string out, err;
};

struct Case {
    std::string name;
    std::string what;
    // Writes the inputs into `dir` and returns memsnap's arguments.
    std::function<std::vector<std::string>(const fs::path& dir)> make;
    std::set<int> exits = {0, 2};
    bool clean_output = false;                          // no raw control characters in stdout or stderr
    std::function<std::string(const Run&)> extra = {};  // more checks: "" when fine
    // The case before's large input in another output format. Left out with --no-budgets (the
    // sanitizer build, where each such run takes 15-25 s): the input is read and analysed there
    // once, and the writers are fuzzed on their own (tests/fuzz, the pictures target).
    bool format_variant = false;
};

// Every case but the regular-expression ones (hostile_cases.cpp).
std::vector<Case> more_cases();
// Small files that describe a lot (amplification_cases.cpp).
std::vector<Case> amplification_cases();

inline void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// ---------------------------------------------------------------------------- snapshots

inline void frame(PickleWriter& w, const std::string& file, std::int64_t line, const std::string& name) {
    w.empty_dict().mark().key("filename").str(file).key("line").integer(line).key("name").str(name).setitems();
}

struct FrameSpec {
    std::string file, name;
    std::int64_t line = 1;
};

inline void block(PickleWriter& w, std::int64_t address, std::int64_t size, const std::string& state,
                  const std::vector<FrameSpec>& frames) {
    w.empty_dict().mark();
    w.key("address").integer(address).key("size").integer(size).key("requested_size").integer(size);
    w.key("state").str(state).key("frames").empty_list();
    if (!frames.empty()) {
        w.mark();
        for (const auto& f : frames) frame(w, f.file, f.line, f.name);
        w.appends();
    }
    w.setitems();
}

// A snapshot with one segment per entry of `blocks_per_segment` (sizes in bytes).
struct Spec {
    std::vector<std::vector<std::int64_t>> segments;
    std::vector<FrameSpec> frames{{"/home/u/train.py", "train_step", 10}};
    std::string state = "active_allocated";
    std::int64_t base = 0x7f0000000000;
    std::string action = "alloc";
    std::string settings_key;
    std::int64_t device = 0;
};

inline std::string snapshot(const Spec& s) {
    PickleWriter w;
    w.empty_dict().mark().key("segments").empty_list().mark();
    std::int64_t at = s.base;
    for (const auto& blocks : s.segments) {
        // Crafted sizes may wrap: computed as the writer's bytes would be, modulo 2^64.
        const auto wrapping_add = [](std::int64_t a, std::int64_t b) {
            return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
        };
        std::int64_t total = 0;
        for (auto b : blocks) total = wrapping_add(total, b);
        w.empty_dict()
            .mark()
            .key("device")
            .integer(s.device)
            .key("address")
            .integer(at)
            .key("total_size")
            .integer(total);
        w.key("stream").integer(0).key("segment_type").str("large").key("blocks").empty_list().mark();
        for (auto b : blocks) {
            block(w, at, b, s.state, s.frames);
            at = wrapping_add(at, b);
        }
        w.appends().setitems();
    }
    w.appends();
    w.key("device_traces").empty_list().mark().empty_list().mark();
    w.empty_dict().mark().key("action").str(s.action).key("addr").integer(s.base).key("size").integer(512);
    w.key("stream").integer(0).key("time_us").integer(1).key("frames").empty_list().setitems();
    w.appends().appends();
    if (!s.settings_key.empty())
        w.key("allocator_settings").empty_dict().mark().key(s.settings_key).integer(1).setitems();
    w.setitems().stop();
    return w.bytes();
}

}  // namespace memsnap::hostile
