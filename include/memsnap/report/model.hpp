#pragma once
// The one report model: every result of the analysis becomes a Document, a tree of named
// values laid out for people and for machines at once, and every format has one writer that
// shows any Document (text, json, markdown, csv, jsonl, html). A field added to a result's
// Document appears in every format; nothing is written per (result, format) pair.
//
// A Node is a value, an object of named nodes, or a list of nodes. Its key is its JSON name;
// its label is how people read it (a section's title, a fact's name). Layouts say how people
// see an object or list (facts, a table, records with a headline, bullets, a stack); machines
// see the same tree as JSON, a CSV of the document's primary list, or JSONL records.

#include <memsnap/util/range.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::report {

// A value and what it means, so that each format shows it its own way: bytes are "1.50 MiB"
// for people and 1572864 in JSON.
struct Value {
    enum class Kind : std::uint8_t {
        none,          // JSON null; "—" for people
        flag,          // true / false; "yes" / "no"
        count,         // a whole number
        signed_count,  // "+3"
        number,        // a fraction, shown with `decimals`
        bytes,         // "1.50 MiB"
        signed_bytes,  // "+20.00 MiB"
        rate,          // bytes per step or capture: "+2.00 MiB/step" (`per_step`)
        share,         // 0..1: "12.5%"
        seconds,       // "2.056 s"
        text,          // free text, from input files or sentences: escaped for people
        word,          // a spelling of a closed vocabulary (a category, a state)
        verdict,       // a verdict's spelling: upper case and coloured for people
        frame,         // a stack frame: {filename, line, name}; "file:line name" for people
        range,         // a byte range {low, high}
        count_range,   // a count range {low, high}
        json,          // JSON text written as is (an allocator setting's value)
        numbers,       // whole numbers for machines (a JSON array; per-iteration counts): one value,
                       // not a node per number, and shared when a node is copied
    };
    Kind kind = Kind::none;
    std::int64_t integer = 0;  // count, bytes, a frame's line, a range's low
    std::int64_t high = 0;     // a range's high
    double real = 0;           // number, rate, share, seconds
    int decimals = 3;          // number
    bool per_step = true;      // rate: per step, else per capture
    bool python = true;        // frame: a Python frame (else C++)
    bool user = false;         // frame: user code by the site rule (kept when a long stack is cut)
    bool compiled = false;     // frame of a site: allocated inside torch.compile's generated code
    bool change = false;       // range, count_range: a change, signed for people ("+7.00 MiB … +9.00 MiB")
    std::string text;          // text, word, verdict, json; a frame's file name
    std::string name;          // a frame's function
    std::string unit;          // count: what is counted, for people ("allocation": "6 allocations")
    std::shared_ptr<const std::vector<std::int64_t>> list;  // numbers

    static Value none() { return {}; }
    static Value flag(bool v);
    static Value count(std::int64_t v);
    static Value count(std::int64_t v, std::string unit);
    static Value signed_count(std::int64_t v);
    static Value number(double v, int decimals = 3);
    static Value bytes(std::int64_t v);
    static Value signed_bytes(std::int64_t v);
    static Value rate(double bytes_per_unit, bool per_step);
    static Value share(double v);
    static Value seconds(double v);
    static Value text_of(std::string v);
    static Value word(std::string_view v);
    static Value verdict(std::string_view v);
    static Value frame(std::string filename, std::int64_t line, std::string name, bool python = true);
    static Value range(ByteRange r);
    static Value count_range(ByteRange r);
    static Value change_range(ByteRange r, bool bytes);
    static Value json(std::string v);
    static Value numbers(std::vector<std::int64_t> v);
    template <class T>
    static Value optional(const std::optional<T>& v, Value (*make)(T)) {
        return v ? make(*v) : none();
    }
};

// How people see a node (machines see the tree).
enum class Layout : std::uint8_t {
    facts,        // object: one "label  value" line per field, aligned; nested nodes by their layout
    line,         // object: its fields on one line, "label value, label value"
    section,      // object or list: a titled block (its label), its content by the layouts inside
    table,        // list of objects: a table, one row per object, one column per field
    records,      // list of objects: each a headline (its `headline` fields) then its other fields
    bullets,      // list of values: one "- value" line each
    inline_list,  // list of values: on one line, comma-separated
    stack,        // list of frames: one frame per line, Python frames only unless C++ frames are asked
    hidden,       // not shown to people (machines only)
};

// Who sees a node.
enum class Audience : std::uint8_t { everyone, people, machines };

struct Node {
    enum class Kind : std::uint8_t { value, object, list };
    Kind kind = Kind::value;
    Layout layout = Layout::facts;
    Audience audience = Audience::everyone;
    std::string key;    // JSON name (empty for list items)
    std::string label;  // for people: a fact's name, a section's title; empty: the key's words
    std::string note;   // for people, after the value
    Value value;
    std::vector<Node> items;
    bool headline = false;  // a record's field shown in its headline (a section's: after its title)
    bool merge = false;     // JSON: the object's fields go into its parent object
    std::string record;     // JSONL: each item of this list (or field of this object) is a record so named
    bool primary = false;   // CSV: the list a CSV shows, one row per item
    // JSON: a list of objects written as one object, each item under the text of its field
    // so named (totals by name), that field left out.
    std::string keyed_by;
    // CSV: an item of this list as it would be, so that an empty list still has its columns.
    std::shared_ptr<const Node> prototype;
    // A long list made one item at a time while it is written, never held whole (a diff's
    // sites): `count` items from `make`.
    std::size_t count = 0;
    std::function<Node(std::size_t)> make;

    std::size_t size() const { return make ? count : items.size(); }
    // The i-th item (made when the list is generated).
    Node item(std::size_t i) const { return make ? make(i) : items[i]; }

    // Builders. `add` returns the node added, to fill it in.
    static Node of(std::string key, Value value, std::string label = {});
    static Node object(std::string key, Layout layout = Layout::facts, std::string label = {});
    static Node list(std::string key, Layout layout, std::string label = {});
    Node& add(Node node);
    Node& add(std::string field_key, Value field_value, std::string field_label = {});
    Node& people_only() {
        audience = Audience::people;
        return *this;
    }
    Node& machines_only() {
        audience = Audience::machines;
        return *this;
    }
    Node& in_headline() {
        headline = true;
        return *this;
    }
    Node& with_note(std::string text) {
        note = std::move(text);
        return *this;
    }
};

// One result, ready for any format.
struct Document {
    std::string kind;   // JSON "kind": snapshot, snapshot_diff, summary_diff, trace, trend, ranks, ...
    std::string title;  // the first line for people
    Node root = Node::object("", Layout::section);
    std::vector<std::string> jsonl_context;  // for JSONL: the root's fields every record starts with
};

}  // namespace memsnap::report
