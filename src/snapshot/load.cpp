#include "builder.hpp"

#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>
#include <memsnap/pickle/reader.hpp>
#include <memsnap/snapshot/load.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace memsnap::snapshot {

namespace {

using pickle::Document;
using pickle::Kind;
using pickle::Value;

std::string_view skip_space(std::string_view s) {
    if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);  // UTF-8 byte order mark
    while (!s.empty() && (s[0] == ' ' || s[0] == '\n' || s[0] == '\r' || s[0] == '\t'))
        s.remove_prefix(1);
    return s;
}

bool looks_like_json(std::string_view bytes) {
    const auto s = skip_space(bytes);
    return !s.empty() && (s[0] == '{' || s[0] == '[');
}

// Converts parsed JSON into the same Document the pickle machine builds, bottom-up, so the
// model builder sees one representation.
class JsonConverter {
public:
    JsonConverter(Document& doc, pickle::SealHook* hook, const pickle::Limits& limits,
                  const std::string& name)
        : doc_(doc), hook_(hook), limits_(limits), name_(name) {}

    Value convert(const nlohmann::ordered_json& j, std::uint32_t depth) {
        if (depth > limits_.max_depth)
            throw input_error(fmt::format("JSON nesting deeper than {} levels (--max-depth)",
                                          limits_.max_depth),
                              name_);
        switch (j.type()) {
            case nlohmann::json::value_t::null:
            case nlohmann::json::value_t::discarded: return Value::make_none();
            case nlohmann::json::value_t::boolean: return Value::make_bool(j.get<bool>());
            case nlohmann::json::value_t::number_integer:
                return Value::make_int(j.get<std::int64_t>());
            case nlohmann::json::value_t::number_unsigned: {
                const auto u = j.get<std::uint64_t>();
                if (u <= static_cast<std::uint64_t>(INT64_MAX))
                    return Value::make_int(static_cast<std::int64_t>(u));
                Value v;
                v.kind = Kind::big_integer;
                v.u = u;
                return v;
            }
            case nlohmann::json::value_t::number_float: return Value::make_float(j.get<double>());
            case nlohmann::json::value_t::string: return string_value(j.get_ref<const std::string&>());
            case nlohmann::json::value_t::binary: return Value::make_none();
            case nlohmann::json::value_t::array: {
                const Value list = doc_.new_container(Kind::list);
                for (const auto& item : j) add(list, convert(item, depth + 1));
                return list;
            }
            case nlohmann::json::value_t::object: {
                const Value dict = doc_.new_container(Kind::dict);
                for (const auto& [key, item] : j.items()) {
                    add(dict, string_value(key));
                    add(dict, convert(item, depth + 1));
                }
                return dict;
            }
        }
        return Value::make_none();
    }

private:
    Value string_value(const std::string& s) {
        if (s.size() > limits_.max_string_length)
            throw input_error(fmt::format("a JSON string of {} bytes is over the limit (--max-string)",
                                          s.size()),
                              name_);
        return doc_.new_owned_string(s);
    }
    void add(const Value& container, const Value& item) {
        const Value stored = pickle::seal(doc_, item, hook_);
        auto& slot = doc_.slot(container);
        slot.depth = std::max<std::uint16_t>(slot.depth, doc_.depth(item) + 1);
        doc_.mutable_items(container).push_back(stored);
    }

    Document& doc_;
    pickle::SealHook* hook_;
    const pickle::Limits& limits_;
    const std::string& name_;
};

}  // namespace

bool looks_like_snapshot(std::string_view bytes) {
    if (bytes.empty() || pickle::looks_like_pickle(bytes) || pickle::looks_like_old_pickle(bytes) ||
        bytes.substr(0, 2) == "PK")
        return true;
    const auto head = bytes.substr(0, 1 << 16);
    if (looks_like_json(head))
        // Any key only a snapshot has: json.dump(..., sort_keys=True) puts "device_traces",
        // which can be long, before "segments".
        for (const char* key : {"\"segments\"", "\"device_traces\"", "\"total_size\"", "\"allocator_settings\""})
            if (head.find(key) != std::string_view::npos) return true;
    // Binary garbage goes to the pickle reader, which names the offending byte.
    for (unsigned char c : bytes.substr(0, 512))
        if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\f'))
            return true;
    return false;
}

Snapshot load_snapshot_bytes(std::string_view bytes, const std::string& name,
                             const LoadOptions& options,
                             const std::function<void(std::uint64_t)>& consumed) {
    Snapshot snap;
    snap.source.path = name;
    snap.source.file_bytes = bytes.size();
    detail::ModelBuilder builder(snap);
    Document doc(bytes);
    if (!bytes.empty() && !pickle::looks_like_pickle(bytes) && looks_like_json(bytes)) {
        nlohmann::ordered_json parsed;
        try {
            parsed = nlohmann::ordered_json::parse(bytes.begin(), bytes.end());
        } catch (const nlohmann::json::parse_error& e) {
            // nlohmann's byte is 1-based and points past the problem; report the offset.
            throw input_error(fmt::format("invalid JSON: {}", e.what()), name,
                              e.byte > 0 ? e.byte - 1 : 0);
        } catch (const nlohmann::json::exception& e) {
            // e.g. a number too large for any integer or double (out_of_range 406)
            throw input_error(fmt::format("invalid JSON: {}", e.what()), name);
        }
        JsonConverter converter(doc, &builder, options.limits, name);
        doc.root = pickle::seal(doc, converter.convert(parsed, 0), &builder);
        parsed = nullptr;
        builder.finish(doc, name);
        snap.source.encoding = "json";
        snap.source.writer = "JSON (json.dump of a snapshot)";
        return snap;
    }
    pickle::StreamInfo info;
    try {
        builder.expect_input_bytes(bytes.size());
        info = pickle::decode(doc, options.limits, &builder, consumed);
    } catch (const Error& e) {
        throw e.with_file(name);
    }
    builder.finish(doc, name);
    snap.source.encoding = "pickle";
    snap.source.writer = std::string(info.writer());
    snap.source.protocol = info.protocol;
    snap.source.trailing_bytes = info.trailing_bytes;
    return snap;
}

Snapshot load_snapshot(const io::MappedFile& file, const LoadOptions& options) {
    return load_snapshot_bytes(file.bytes(), file.path(), options,
                               [&file](std::uint64_t offset) { file.release_prefix(offset); });
}

Snapshot load_snapshot(const std::string& path, const LoadOptions& options) {
    return load_snapshot(io::MappedFile(path), options);
}

}  // namespace memsnap::snapshot
