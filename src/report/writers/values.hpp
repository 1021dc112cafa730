#pragma once
// Internal: how each format writes a Value, and the words of a node for people.

#include <memsnap/report/model.hpp>

#include <nlohmann/json.hpp>

#include <string>

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

}  // namespace memsnap::report::detail
