// Frames of stacks="all" captures in true call order (src/analysis/sites/call_order.hpp):
// PyTorch appends the Python frames it could not splice in after `_start`; memsnap puts them
// back inside the outermost evaluator, once, for the text and every picture. Checked on the
// rule itself and, with --cpp-frames, on every real capture: no process start frame below a
// Python frame, and the call graph (DOT's nodes and edges) has no cycle but recursion once
// CPython's call trampolines, whose place PyTorch records only roughly, are set aside.

#include "analysis/sites/call_order.hpp"

#include "support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace memsnap;

namespace {

struct Frame {
    std::string name;
    bool python = false;
};

std::vector<std::string> ordered(std::vector<Frame> frames) {
    analysis::detail::into_call_order(
        frames, [](const Frame& f) { return f.python; },
        [](const Frame& f) { return analysis::detail::evaluates_python(f.name); });
    std::vector<std::string> out;
    for (const auto& f : frames) out.push_back(f.name);
    return out;
}

// One line of folded output: its frames, outermost first.
std::vector<std::string> folded_frames(const std::string& line) {
    std::vector<std::string> out;
    const auto space = line.rfind(' ');
    std::size_t start = 0;
    const std::string stack = line.substr(0, space);
    while (start <= stack.size()) {
        const auto end = std::min(stack.find(';', start), stack.size());
        out.push_back(stack.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

// A Python frame as folded output writes it: "name (file.py:line)".
bool python_frame(const std::string& frame) {
    static const std::regex python(R"(\((.*\.py|<ipython-input-.*|<eval_with_key>.*):[0-9]+\)$)");
    return std::regex_search(frame, python);
}

// A frame of the process's start, which calls the interpreter and so sits outside every
// Python frame: the C library's and CPython's entry points.
bool start_frame(const std::string& frame) {
    static const std::regex start(
        R"(^(__libc_start\w*|__libc_init_first|_start|Py_BytesMain|Py_RunMain|pymain_\w+|_?PyRun_\w+|pyrun_\w+|run_mod|run_eval_code_obj|PyEval_EvalCode)(\.\S*)?( \(|$))");
    return !python_frame(frame) && std::regex_search(frame, start);
}

// CPython's call trampolines between two evaluators (method_vectorcall, slot_tp_call,
// _PyObject_Call_Prepend, ...). PyTorch gives each evaluator one Python frame, innermost
// first; where one evaluator ran several, the Python frames beyond it sit one evaluator off,
// so a trampoline may come out on either side of the Python frame next to it. Nothing in the
// capture says which evaluator ran which frames: only the trampolines' place is uncertain.
bool trampoline(const std::string& frame) {
    static const std::regex call(
        R"(^(method_vectorcall|slot_tp_|slot_nb_|_?PyObject_|cfunction_|type_call|ternary_op|binary_op|_?PyFunction_|_?PyVectorcall|_PyEval_Vector|vectorcall)|/(Objects|Python)/[A-Za-z_]+\.c(:[0-9]+)?\)$)");
    return !python_frame(frame) && std::regex_search(frame, call);
}

// A cycle of the call graph drawn from `lines` (an edge per caller and callee, CPython's call
// trampolines left out), left after the calls back into a frame already further out on the
// same stack (recursion: nested modules call _call_impl again) are taken out; empty when
// there is none.
std::vector<std::string> cycle_but_recursion(const std::vector<std::vector<std::string>>& lines) {
    std::set<std::pair<std::string, std::string>> edges, recursive;
    for (const auto& all : lines) {
        std::vector<std::string> frames;
        std::copy_if(all.begin(), all.end(), std::back_inserter(frames), [](const auto& f) { return !trampoline(f); });
        std::set<std::string> outer;
        for (std::size_t i = 0; i < frames.size(); ++i) {
            if (i > 0) (outer.count(frames[i]) ? recursive : edges).insert({frames[i - 1], frames[i]});
            outer.insert(frames[i]);
        }
    }
    std::map<std::string, std::vector<std::string>> callees;
    for (const auto& e : edges)
        if (!recursive.count(e)) callees[e.first].push_back(e.second);
    std::map<std::string, int> state;  // 1 on the path, 2 done
    std::vector<std::string> path;
    std::vector<std::string> found;
    const auto visit = [&](const auto& self, const std::string& frame) -> bool {
        state[frame] = 1;
        path.push_back(frame);
        for (const auto& next : callees[frame]) {
            if (state[next] == 1) {
                found.assign(std::find(path.begin(), path.end(), next), path.end());
                found.push_back(next);
                return true;
            }
            if (state[next] == 0 && self(self, next)) return true;
        }
        state[frame] = 2;
        path.pop_back();
        return false;
    };
    for (const auto& [frame, _] : callees)
        if (state[frame] == 0 && visit(visit, frame)) break;
    return found;
}

}  // namespace

TEST_SUITE("unit") {
    TEST_CASE("call order: Python frames left after _start go inside the outermost evaluator") {
        // As PyTorch writes it, innermost first: the C++ frames with one Python frame spliced in
        // before each evaluator, then the Python frames left over.
        const std::vector<Frame> recorded = {{"malloc"},
                                             {"THPVariable_add"},
                                             {"forward", true},
                                             {"_PyEval_EvalFrameDefault"},
                                             {"slot_tp_call"},
                                             {"step", true},
                                             {"_PyEval_EvalFrame"},
                                             {"PyEval_EvalCode"},
                                             {"Py_BytesMain"},
                                             {"__libc_init_first"},
                                             {"_start"},
                                             {"wrapper", true},
                                             {"train", true},
                                             {"<module>", true}};
        CHECK(ordered(recorded) ==
              std::vector<std::string>{"malloc", "THPVariable_add", "forward", "_PyEval_EvalFrameDefault",
                                       "slot_tp_call", "step", "wrapper", "train", "<module>", "_PyEval_EvalFrame",
                                       "PyEval_EvalCode", "Py_BytesMain", "__libc_init_first", "_start"});
        // Already in order (every Python frame spliced in): unchanged, and so is a second pass.
        const auto once = ordered(recorded);
        std::vector<Frame> again;
        for (const auto& name : once) {
            const auto at =
                std::find_if(recorded.begin(), recorded.end(), [&](const Frame& f) { return f.name == name; });
            again.push_back(*at);
        }
        CHECK(ordered(again) == once);
    }

    TEST_CASE("call order: stacks without an evaluator are left as they are") {
        CHECK(ordered({{"f", true}, {"g", true}}) == std::vector<std::string>{"f", "g"});
        CHECK(ordered({{"malloc"}, {"_start"}}) == std::vector<std::string>{"malloc", "_start"});
        // Not symbolised: nothing says where the interpreter was.
        CHECK(ordered({{"??"}, {"??"}, {"f", true}}) == std::vector<std::string>{"??", "??", "f"});
        CHECK(ordered({}).empty());
    }
}

TEST_SUITE("real") {
    TEST_CASE("call order: with --cpp-frames every real capture's stacks start at _start and nest") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        std::size_t mixed = 0;
        for (const auto& ext : {".pickle", ".pkl"})
            for (const auto& path : test::files_in(test::real_dir() / "snapshots", ext))
                for (const std::string command : {"info", "trace"}) {
                    CAPTURE(path.filename().string());
                    CAPTURE(command);
                    const auto r = test::run_memsnap(
                        fmt::format("{} {} --format folded --cpp-frames", command, test::quote(path)));
                    if (command == "trace" && r.exit_code == 2) continue;  // no trace to replay: said so
                    REQUIRE(r.exit_code == 0);
                    std::vector<std::vector<std::string>> lines;
                    std::istringstream in(r.out);
                    bool has_mixed = false;
                    for (std::string line; std::getline(in, line);) {
                        lines.push_back(folded_frames(line));
                        bool python_seen = false, cpp = false;
                        for (const auto& frame : lines.back()) {
                            CHECK_MESSAGE(!(python_seen && start_frame(frame)),
                                          frame << " is drawn below a Python frame: " << line.substr(0, 400));
                            python_seen = python_seen || python_frame(frame);
                            cpp = cpp || !python_frame(frame);
                        }
                        has_mixed = has_mixed || (python_seen && cpp);
                    }
                    mixed += has_mixed;
                    const auto cycle = cycle_but_recursion(lines);
                    std::string shown;
                    for (const auto& f : cycle) shown += "\n  " + f.substr(0, 160);
                    CHECK_MESSAGE(cycle.empty(), "a cycle that no recursion explains:" << shown);
                }
        // Most real captures are stacks="all" (C++ and Python frames in one stack).
        CHECK(mixed >= 10);
    }
}
