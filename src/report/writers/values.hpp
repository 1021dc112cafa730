#pragma once
// Internal: how each format writes a Value, and the words of a node for people.

#include <memsnap/report/model.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace memsnap::report::detail {

using Json = nlohmann::ordered_json;

// The version of the JSON documents' and the JSONL records' keys ("schema_version").
constexpr int kSchemaVersion = 2;

// A value for people, without colour: "1.50 MiB", "+2.00 MiB/step", "model.py:12 forward".
std::string for_people(const Value& value);
// A value in JSON: bytes and counts as integers, a frame as {filename, line, name}.
Json to_json(const Value& value);
// Whether people read the value as a number (right-aligned in tables).
bool is_numeric(const Value& value);
// The node's label, or its key with '_' read as spaces.
std::string label_of(const Node& node);
// Whether the node is shown to people / to machines.
inline bool for_people(const Node& node) {
    return node.audience != Audience::machines && node.layout != Layout::hidden;
}
inline bool for_machines(const Node& node) { return node.audience != Audience::people; }

// The lines of a stack people read, innermost first. Without --cpp-frames: the Python frames,
// a long run cut in its middle (the innermost are where it allocated, the outermost the user's
// call that led there); a stack with no Python frame shows its operator and autograd-node
// frames (at::_ops::bmm::call, BmmBackward0::apply), where all of it hidden would say nothing.
struct StackLines {
    struct Line {
        std::size_t item = 0;        // the list's item
        std::size_t gap_before = 0;  // Python frames left out before this line
    };
    std::vector<Line> lines;
    std::size_t gap_at_end = 0;  // Python frames left out after the last line
    std::size_t cpp_hidden = 0;  // C++ frames not shown
};
StackLines stack_lines(const Node& list, bool cpp_frames, std::size_t python_limit);
// The lines that stand for frames left out: "... 2 more Python frames", "(24 C++ frames not
// shown: --cpp-frames shows them)".
std::string python_frames_left_out(std::size_t frames);
std::string cpp_frames_left_out(std::size_t frames);

}  // namespace memsnap::report::detail
