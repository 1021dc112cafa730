// The JSONL writer: one flat, self-describing JSON object per line for query engines (DuckDB's
// read_json_auto, Spark's spark.read.json). A list whose node names a record gives a line per
// item; an object that names one gives a line per value ({"name", "bytes"}, with "low" and
// "high" for a range). Every line starts with the schema version (as the JSON documents') and
// the record's kind, the file, rank and step (from the file name), then the context the
// document names (device, table), taken from the innermost object that has it.
#include "values.hpp"
#include "writers.hpp"

#include <algorithm>

namespace memsnap::report::detail {

namespace {

class JsonlWriter {
  public:
    JsonlWriter(const Document& d, const JsonlFile& file, const Sink& sink) : document_(d), sink_(sink) {
        base_["file"] = file.file;
        base_["rank"] = file.rank ? Json(*file.rank) : Json(nullptr);
        base_["step"] = file.step ? Json(*file.step) : Json(nullptr);
        for (const auto& key : d.jsonl_context) base_[key] = nullptr;
    }

    void run() {
        walk(document_.root, base_);
        sink_(out_);
    }

  private:
    const Document& document_;
    const Sink& sink_;
    Json base_ = Json::object();
    std::string out_;

    // The context with the values `object` gives for the document's context keys.
    Json with_context(const Node& object, const Json& context) const {
        Json out = context;
        for (const auto& f : object.items) {
            if (f.kind != Node::Kind::value || !for_machines(f)) continue;
            const bool named = std::find(document_.jsonl_context.begin(), document_.jsonl_context.end(), f.key) !=
                               document_.jsonl_context.end();
            if (named || ((f.key == "step") && f.value.kind != Value::Kind::none)) out[f.key] = to_json(f.value);
        }
        return out;
    }

    void line(Json record) { out_ += record.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n"; }

    static Json fields_of(const Node& object) {
        Json out = Json::object();
        for (const auto& f : object.items) {
            if (!for_machines(f)) continue;
            if (f.kind == Node::Kind::value && f.value.kind != Value::Kind::numbers)  // records hold no lists
                out[f.key] = to_json(f.value);
            else if (f.kind == Node::Kind::object && f.merge)
                out.update(fields_of(f));
        }
        return out;
    }

    void records(const Node& n, const Json& context) {
        if (n.kind == Node::Kind::list) {
            for (std::size_t i = 0; i < n.size(); ++i) {
                const Node item = n.item(i);
                if (!for_machines(item) || item.kind != Node::Kind::object) continue;
                Json j = {{"schema_version", kSchemaVersion}, {"record", n.record}};
                j.update(context);
                // The context keeps its names: a site's position does not replace the file's rank.
                const Json fields = fields_of(item);
                for (const auto& [key, value] : fields.items())
                    if (!j.contains(key)) j[key] = value;
                line(std::move(j));
            }
            return;
        }
        for (const auto& f : n.items) {
            if (!for_machines(f) || f.kind != Node::Kind::value) continue;
            const auto& v = f.value;
            if (v.kind != Value::Kind::bytes && v.kind != Value::Kind::range) continue;
            Json j = {{"schema_version", kSchemaVersion}, {"record", n.record}};
            j.update(context);
            j["name"] = f.key;
            if (v.kind == Value::Kind::bytes) {
                j["bytes"] = v.integer;
            } else {
                j["bytes"] = v.integer + (v.high - v.integer) / 2;
                j["low"] = v.integer;
                j["high"] = v.high;
            }
            line(std::move(j));
        }
    }

    void walk(const Node& n, const Json& context) {
        if (n.kind == Node::Kind::value || !for_machines(n)) return;
        const Json here = n.kind == Node::Kind::object ? with_context(n, context) : context;
        if (!n.record.empty()) return records(n, here);
        for (std::size_t i = 0; i < n.size(); ++i) walk(n.item(i), here);
    }
};

}  // namespace

void write_jsonl(const Document& document, const JsonlFile& file, const Sink& sink) {
    JsonlWriter(document, file, sink).run();
}

}  // namespace memsnap::report::detail
