#pragma once
// Reading a snapshot file of any generation and either writer into the typed model.

#include <memsnap/io/decompressed_input.hpp>
#include <memsnap/io/mapped_file.hpp>
#include <memsnap/pickle/limits.hpp>
#include <memsnap/snapshot/model.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace memsnap::snapshot {

struct LoadOptions {
    pickle::Limits limits;
    // Told every 1 MiB how far a pickle's reader got, of how many bytes (for a progress line).
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

// What the first bytes of a file say it is. Cheap: looks at a prefix only.
enum class Content {
    pickle,         // PROTO, a protocol 0/1 pickle, or a zip: for the pickle reader to judge
    json_snapshot,  // JSON holding keys only a snapshot has
    text,           // anything else readable: summaries, logs, notebooks
    binary,         // NUL bytes or mostly control bytes, and none of the above
};
Content classify_content(std::string_view head);

// True when `bytes` are for the snapshot reader (pickle, JSON snapshot, or binary garbage,
// which the pickle reader names by its first byte).
bool looks_like_snapshot(std::string_view bytes);

// Decodes a pickle or JSON snapshot held in `bytes`; `name` is used in errors.
// Throws memsnap::Error (input) naming the file, with the byte offset for pickles.
// `consumed`, when given, is told how far the reader got (see pickle::decode).
Snapshot load_snapshot_bytes(std::string_view bytes, const std::string& name, const LoadOptions& options = {},
                             const std::function<void(std::uint64_t)>& consumed = {});

// Decodes an opened file, releasing its pages as the reader passes them.
Snapshot load_snapshot(const io::MappedFile& file, const LoadOptions& options = {});

// Decodes a pickle as it is decompressed, giving back the bytes read. Progress is the
// decompressor's to tell (DecompressOptions::consumed), in compressed bytes.
Snapshot load_snapshot(io::DecompressedInput& input, const LoadOptions& options = {});

// Maps and decodes the file at `path` ("-" for standard input).
Snapshot load_snapshot(const std::string& path, const LoadOptions& options = {});

}  // namespace memsnap::snapshot
