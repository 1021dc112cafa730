#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/io/decompressed_input.hpp>
#include <memsnap/io/mapped_file.hpp>
#include <memsnap/io/unwrap.hpp>
#include <memsnap/pickle/reader.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/snapshot/viz_page.hpp>
#include <memsnap/stats/text_reader.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace memsnap::capture {

namespace {

// Refuses what can be neither a snapshot nor text before the rest of it is read: an endless
// /dev/zero ends here.
void check_head(std::string_view head, const std::string& path) {
    if (io::wrapping_of(head) != io::Wrapping::none) return;
    if (snapshot::classify_content(head) == snapshot::Content::binary)
        throw input_error(fmt::format("not a pickle of protocol 2 to 5 (starts with byte 0x{:02x}), nor text",
                                      static_cast<unsigned char>(head.front())),
                          path, 0);
}

// A newer page may list several snapshots (local_files): the first is read; the warning names
// the others and how to have them read.
void several_snapshots(snapshot::Snapshot& snap, const std::vector<std::string>& names) {
    std::vector<std::string> others;
    for (std::size_t k = 1; k < names.size() && k <= 8; ++k) others.push_back(fmt::format("{} \"{}\"", k, names[k]));
    snap.warnings.push_back(fmt::format(
        "the page holds {} snapshots: memsnap read the first (\"{}\") only; the others (local_files entries {}{}) "
        "are read once extracted: each entry's \"base64\" field decoded is a snapshot pickle (memsnap(1), INPUTS "
        "AS PEOPLE SHARE THEM)",
        names.size(), names[0], fmt::join(others, ", "), names.size() > 9 ? ", ..." : ""));
}

// Text: every table kept, or each handed to `tables` and none kept.
stats::StatsCapture read_text(std::string_view text, const std::string& name, const stats::TableSink& tables) {
    if (!tables) return stats::read_stats_text(text, name);
    stats::StatsCapture capture;
    capture.file = name;
    capture.kind = stats::read_stats_tables(text, name, tables);
    return capture;
}

// A page may come gzipped, but nothing is unwrapped twice the same way.
void refuse_twice(io::Wrapping next, io::Wrapping outer, const std::string& path) {
    if (next == outer)
        throw input_error(fmt::format("a {} inside a {}: refused", io::to_string(next), io::to_string(outer)), path);
}

// What a page or a compressed file holds, read whole: a page, a table, a JSON snapshot, or
// a pickle from a page. `names`: the snapshots the outer page lists.
Capture read_inner(std::string_view inner, io::Wrapping outer, std::vector<std::string> names, const std::string& path,
                   const pickle::Limits& limits, std::uint64_t limit, const ProgressFn& progress,
                   const stats::TableSink& tables) {
    const auto next = io::wrapping_of(inner.substr(0, 4096));
    refuse_twice(next, outer, path);
    if (next == io::Wrapping::html && snapshot::is_alloc_data_page(inner))
        return {path, snapshot::read_alloc_data_page(inner, path, limits)};
    if (next == io::Wrapping::html) names = io::page_snapshot_names(inner);
    const auto deeper = io::unwrap(inner, path, limit);
    auto capture = capture_from_bytes(deeper ? std::string_view(*deeper) : inner, path, limits, progress, tables);
    if (names.size() > 1 && capture.is_snapshot())
        several_snapshots(std::get<snapshot::Snapshot>(capture.content), names);
    return capture;
}

// A gzip or zstd file. A pickle inside is read as it is decompressed, its bytes given back
// behind the reader, so that it is never whole in memory; anything else is read whole.
Capture read_compressed(const io::MappedFile& file, io::Wrapping outer, const pickle::Limits& limits,
                        std::uint64_t limit, const ProgressFn& progress, const stats::TableSink& tables) {
    io::DecompressOptions options;
    options.limit = limit;
    // One progress line, in compressed bytes: the reader keeps pace with the decompression.
    options.consumed = [&progress, &file](std::uint64_t consumed) {
        file.release_prefix(consumed);
        if (progress) progress({ReadProgress::Stage::decompressing, consumed, file.bytes().size()});
    };
    io::DecompressedInput input(file.bytes(), outer, file.path(), options);
    const auto head = input.more(std::uint64_t{64} << 10);
    const auto next = io::wrapping_of(head.substr(0, 4096));
    refuse_twice(next, outer, file.path());
    if (next == io::Wrapping::none && pickle::looks_like_pickle(head)) {
        snapshot::LoadOptions load;
        load.limits = limits;
        return {file.path(), snapshot::load_snapshot(input, load)};
    }
    return read_inner(input.all(), outer, {}, file.path(), limits, limit, progress, tables);
}

Capture read(const io::MappedFile& file, const pickle::Limits& limits, std::uint64_t max_input,
             const ProgressFn& progress, const stats::TableSink& tables) {
    // gzip, zstd or a _memory_viz.py page: read what is inside.
    const auto limit = io::unwrap_limit(file.bytes().size(), max_input);
    const auto outer = io::wrapping_of(file.bytes().substr(0, 4096));
    if (outer == io::Wrapping::gzip || outer == io::Wrapping::zstd)
        return read_compressed(file, outer, limits, limit, progress, tables);
    if (outer == io::Wrapping::html) {
        // torch 2.0's trace_plot pages hold alloc_data, replayed, not a pickle.
        if (snapshot::is_alloc_data_page(file.bytes()))
            return {file.path(), snapshot::read_alloc_data_page(file.bytes(), file.path(), limits)};
        const auto inner = io::unwrap(file.bytes(), file.path(), limit);
        return read_inner(*inner, outer, io::page_snapshot_names(file.bytes()), file.path(), limits, limit, progress,
                          tables);
    }
    if (snapshot::looks_like_snapshot(file.bytes())) {
        snapshot::LoadOptions load;
        load.limits = limits;
        if (progress)
            load.progress = [&progress](std::uint64_t done, std::uint64_t total) {
                progress({ReadProgress::Stage::reading, done, total});
            };
        return {file.path(), snapshot::load_snapshot(file, load)};
    }
    return {file.path(), read_text(file.bytes(), file.path(), tables)};
}

}  // namespace

Capture capture_from_bytes(std::string_view bytes, const std::string& name, const pickle::Limits& limits,
                           const ProgressFn& progress, const stats::TableSink& tables) {
    check_head(bytes, name);
    if (snapshot::looks_like_snapshot(bytes)) {
        snapshot::LoadOptions load;
        load.limits = limits;
        std::function<void(std::uint64_t)> consumed;
        if (progress)
            consumed = [&progress, &bytes](std::uint64_t done) {
                progress({ReadProgress::Stage::reading, done, bytes.size()});
            };
        return {name, snapshot::load_snapshot_bytes(bytes, name, load, consumed)};
    }
    return {name, read_text(bytes, name, tables)};
}

Capture load_capture(const std::string& path, const pickle::Limits& limits, std::uint64_t max_input,
                     const ProgressFn& progress) {
    return load_capture(InputName{path, false}, limits, max_input, progress);
}

Capture load_capture(const InputName& input, const pickle::Limits& limits, std::uint64_t max_input,
                     const ProgressFn& progress, const stats::TableSink& tables) {
    const std::string& path = input.path;
    io::ReadOptions options;
    options.regular_only = input.in_directory;
    options.max_input = max_input;
    options.check_head = [&path](std::string_view head) { check_head(head, path); };
    const io::MappedFile file(path, options);
    const auto changed = [&] {
        return input_error(
            "the file changed while it was being read (truncated or replaced?); read it again "
            "once it is complete",
            path);
    };
    try {
        auto capture = read(file, limits, max_input, progress, tables);
        if (file.changed()) throw changed();
        return capture;
    } catch (const Error&) {
        if (file.changed()) throw changed();
        throw;
    }
}

}  // namespace memsnap::capture
