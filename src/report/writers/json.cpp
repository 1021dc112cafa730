// The JSON writer: any Document as one JSON object, {"schema_version", "kind", then the
// document's fields}, indented two spaces as nlohmann's dump writes it. A long list made one
// item at a time is written one item at a time.
#include "values.hpp"
#include "writers.hpp"

namespace memsnap::report::detail {

namespace {

constexpr std::size_t kFlushBytes = 64 * 1024;

std::string dumped(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace); }

class JsonWriter {
  public:
    explicit JsonWriter(const Sink& sink) : sink_(sink) {}

    void document(const Document& d) {
        std::vector<std::pair<std::string, const Node*>> fields;
        fields_of(d.root, fields);
        out_ += "{\n  \"schema_version\": " + std::to_string(kSchemaVersion) + ",\n  \"kind\": " + dumped(Json(d.kind));
        for (const auto& [key, node] : fields) {
            out_ += ",\n  " + dumped(Json(key)) + ": ";
            write(*node, 1);
            if (out_.size() >= kFlushBytes) {
                sink_(out_);
                out_.clear();
            }
        }
        out_ += "\n}\n";
        sink_(out_);
    }

  private:
    const Sink& sink_;
    std::string out_;

    // The JSON fields of an object: its machine-visible items, merged objects spread in place.
    static void fields_of(const Node& object, std::vector<std::pair<std::string, const Node*>>& out) {
        for (const auto& item : object.items) {
            if (!for_machines(item)) continue;
            if (item.merge && item.kind == Node::Kind::object)
                fields_of(item, out);
            else
                out.emplace_back(item.key, &item);
        }
    }

    void indented(const std::string& text, int depth) {
        const std::string pad(static_cast<std::size_t>(2 * depth), ' ');
        for (const char c : text) {
            out_ += c;
            if (c == '\n') out_ += pad;  // JSON strings hold no raw newline: every one is a line break
        }
    }

    void write(const Node& n, int depth) {
        const std::string pad(static_cast<std::size_t>(2 * (depth + 1)), ' ');
        if (n.kind == Node::Kind::value) return indented(dumped(to_json(n.value)), depth);
        if (n.kind == Node::Kind::object) {
            std::vector<std::pair<std::string, const Node*>> fields;
            fields_of(n, fields);
            if (fields.empty()) return void(out_ += "{}");
            out_ += "{";
            for (std::size_t i = 0; i < fields.size(); ++i) {
                out_ += (i ? ",\n" : "\n") + pad + dumped(Json(fields[i].first)) + ": ";
                write(*fields[i].second, depth + 1);
            }
            out_ += "\n" + pad.substr(2) + "}";
            return;
        }
        if (!n.keyed_by.empty()) return keyed(n, depth);
        bool first = true;
        for (std::size_t i = 0; i < n.size(); ++i) {
            const Node item = n.item(i);
            if (!for_machines(item)) continue;
            out_ += (first ? "[\n" : ",\n") + pad;
            first = false;
            write(item, depth + 1);
            // A made list goes out one item at a time; any list once a buffer's worth is ready,
            // so that a large document never sits whole in memory.
            if (n.make || out_.size() >= kFlushBytes) {
                sink_(out_);
                out_.clear();
            }
        }
        out_ += first ? "[]" : "\n" + pad.substr(2) + "]";
    }

    // A list of objects as one object keyed by each item's `keyed_by` field.
    void keyed(const Node& n, int depth) {
        Node object = Node::object("", Layout::facts);
        for (std::size_t i = 0; i < n.size(); ++i) {
            Node item = n.item(i);
            if (!for_machines(item)) continue;
            std::string key;
            Node rest = Node::object("", Layout::facts);
            for (auto& field : item.items) {
                if (field.key == n.keyed_by && field.kind == Node::Kind::value)
                    key = field.value.text;
                else
                    rest.items.push_back(std::move(field));
            }
            rest.key = std::move(key);
            object.items.push_back(std::move(rest));
        }
        write(object, depth);
    }
};

}  // namespace

void write_json(const Document& document, const Sink& sink) { JsonWriter(sink).document(document); }

}  // namespace memsnap::report::detail
