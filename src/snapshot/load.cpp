#include "builder.hpp"
#include "json_reader.hpp"

#include <memsnap/error.hpp>
#include <memsnap/io/decompressed_input.hpp>
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
    while (!s.empty() && (s[0] == ' ' || s[0] == '\n' || s[0] == '\r' || s[0] == '\t')) s.remove_prefix(1);
    return s;
}

bool looks_like_json(std::string_view bytes) {
    const auto s = skip_space(bytes);
    return !s.empty() && (s[0] == '{' || s[0] == '[');
}

// Reads the pickle in doc's input into `snap` through `builder`.
void decode_pickle(Document& doc, detail::ModelBuilder& builder, Snapshot& snap, const std::string& name,
                   const pickle::Limits& limits, const std::function<void(std::uint64_t)>& consumed,
                   const pickle::GrowingInput* growing = nullptr) {
    pickle::StreamInfo info;
    try {
        builder.expect_input_bytes(growing ? growing->expected_size : doc.input().size());
        info = pickle::decode(doc, limits, &builder, consumed, growing);
    } catch (const Error& e) {
        throw e.with_file(name);
    }
    snap.source.file_bytes = doc.input().size();
    builder.finish(doc, name);
    snap.source.encoding = "pickle";
    snap.source.writer = std::string(info.writer());
    snap.source.protocol = info.protocol;
    snap.source.trailing_bytes = info.trailing_bytes;
}

}  // namespace

Content classify_content(std::string_view bytes) {
    if (bytes.empty() || pickle::looks_like_pickle(bytes) || pickle::looks_like_old_pickle(bytes) ||
        bytes.substr(0, 2) == "PK")
        return Content::pickle;
    const auto head = bytes.substr(0, 1 << 16);
    if (looks_like_json(head))
        // Any key only a snapshot has: json.dump(..., sort_keys=True) puts "device_traces",
        // which can be long, before "segments".
        for (const char* key : {"\"segments\"", "\"device_traces\"", "\"total_size\"", "\"allocator_settings\""})
            if (head.find(key) != std::string_view::npos) return Content::json_snapshot;
    // Text may hold a stray control byte (a BEL, terminal colours); binary data holds NULs
    // or many of them.
    std::size_t control = 0;
    const auto sample = bytes.substr(0, 512);
    for (const char byte : sample) {
        const auto c = static_cast<unsigned char>(byte);
        if (c == 0) return Content::binary;
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v' && c != 0x1b && c != 0x07 &&
            c != 0x08)
            ++control;
    }
    return control * 10 > sample.size() ? Content::binary : Content::text;
}

bool looks_like_snapshot(std::string_view bytes) { return classify_content(bytes) != Content::text; }

Snapshot load_snapshot_bytes(std::string_view bytes, const std::string& name, const LoadOptions& options,
                             const std::function<void(std::uint64_t)>& consumed) {
    Snapshot snap;
    snap.source.path = name;
    snap.source.file_bytes = bytes.size();
    detail::ModelBuilder builder(snap);
    Document doc(bytes);
    if (!bytes.empty() && !pickle::looks_like_pickle(bytes) && looks_like_json(bytes)) {
        detail::read_json(bytes, doc, &builder, options.limits, name, consumed);
        builder.finish(doc, name);
        snap.source.encoding = "json";
        snap.source.writer = "JSON (json.dump of a snapshot)";
        return snap;
    }
    decode_pickle(doc, builder, snap, name, options.limits, consumed);
    return snap;
}

Snapshot load_snapshot(const io::MappedFile& file, const LoadOptions& options) {
    return load_snapshot_bytes(file.bytes(), file.path(), options, [&file, &options](std::uint64_t offset) {
        file.release_prefix(offset);
        if (options.progress) options.progress(offset, file.bytes().size());
    });
}

Snapshot load_snapshot(io::DecompressedInput& input, const LoadOptions& options) {
    Snapshot snap;
    snap.source.path = input.name();
    detail::ModelBuilder builder(snap);
    Document doc(input.bytes());
    // Dropped pages of anonymous memory read as zeros: strings the memo may still hand out
    // are copied first.
    doc.note_input_strings();
    pickle::GrowingInput growing;
    growing.more = [&input](std::uint64_t end) { return input.more(end); };
    growing.expected_size = input.expected_size();
    growing.lookahead = std::min<std::uint64_t>(input.step(), growing.lookahead);
    decode_pickle(
        doc, builder, snap, input.name(), options.limits,
        [&](std::uint64_t offset) {
            doc.keep_strings_before(offset);
            input.release_prefix(offset);
        },
        &growing);
    return snap;
}

Snapshot load_snapshot(const std::string& path, const LoadOptions& options) {
    return load_snapshot(io::MappedFile(path), options);
}

}  // namespace memsnap::snapshot
