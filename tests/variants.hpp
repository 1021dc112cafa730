#pragma once
// Variants of real captures, as real captures come: a re-run in another checkout (renamed
// paths, shifted addresses, later clock), a Windows machine, another device, blocks freed or
// added. Built from the model of a capture read in place from ../shared/real, and written
// back as a JSON snapshot (a form memsnap reads) when the CLI must see them.

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/snapshot/model.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace memsnap::test {

struct Variant {
    std::function<std::string(std::string_view)> rename;  // frame file names
    std::int64_t address_shift = 0;                       // every segment, block and trace address
    std::int64_t time_shift_us = 0;                       // every trace time
    std::optional<int> device;                            // every segment and trace event moves here
};

// A live block whose stack names a user-code site outside the one-time categories: where a
// leak is injected into a real capture.
inline std::optional<snapshot::StackId> user_stack(const snapshot::Snapshot& snap) {
    analysis::StackIndex index({&snap}, {}, {});
    for (const auto& b : snap.blocks)
        if (b.live() && b.stack != snapshot::no_stack && index.site(index.stack(0, b.stack)).user_code &&
            !analysis::is_one_time(index.category(0, b.stack)))
            return b.stack;
    return std::nullopt;
}

// A copy of `in` with frames re-interned under their new names and stacks rebuilt.
inline snapshot::Snapshot make_variant(const snapshot::Snapshot& in, const Variant& v) {
    using namespace snapshot;
    Snapshot out = in;
    out.frames = FrameTable{};
    out.stacks = StackTable{};
    std::vector<FrameId> frame_map(in.frames.size());
    for (std::uint32_t f = 0; f < in.frames.size(); ++f) {
        Frame frame = in.frames[FrameId(f)];
        if (v.rename) frame.filename = out.strings.intern(v.rename(in.str(frame.filename)));
        frame_map[f] = out.frames.intern(frame);
    }
    std::vector<StackId> stack_map(in.stacks.size());
    std::vector<FrameId> scratch;
    for (std::uint32_t s = 1; s < in.stacks.size(); ++s) {
        scratch.clear();
        for (FrameId f : in.stacks.frames(StackId(s))) scratch.push_back(frame_map[f.value]);
        stack_map[s] = out.stacks.intern(scratch);
    }
    for (auto& seg : out.segments) {
        seg.address += v.address_shift;
        seg.stack = stack_map[seg.stack.value];
        if (v.device) seg.device = *v.device;
    }
    for (auto& b : out.blocks) {
        b.address += v.address_shift;
        b.stack = stack_map[b.stack.value];
    }
    for (std::size_t i = 0; i < out.events.size(); ++i) {
        auto e = out.events[i];
        if (e.action() != TraceAction::oom) e.addr += v.address_shift;
        if (e.time_us >= 0) e.time_us += v.time_shift_us;
        e.stack = stack_map[e.stack.value];
        if (v.device) e.device = static_cast<std::int16_t>(*v.device);
        out.events.set(i, e);
    }
    if (v.device) out.trace_devices = std::max<std::size_t>(out.trace_devices, static_cast<std::size_t>(*v.device) + 1);
    return out;
}

// Adds `count` live blocks of `size` with `stack` in a new segment at `address`.
inline void inject_blocks(snapshot::Snapshot& snap, snapshot::StackId stack, std::int64_t size, int count,
                          std::int64_t address = 0x7fff00000000) {
    snapshot::Segment seg;
    seg.device = snap.segments.empty() ? 0 : snap.segments.front().device;
    seg.address = address;
    seg.total_size = size * count;
    seg.first_block = static_cast<std::uint32_t>(snap.blocks.size());
    seg.block_count = static_cast<std::uint32_t>(count);
    seg.segment_type = snap.strings.intern("large");
    for (int i = 0; i < count; ++i) {
        snapshot::Block b;
        b.address = seg.address + i * size;
        b.size = b.requested_size = size;
        b.stack = stack;
        b.state = snapshot::BlockState::active_allocated;
        b.state_name = snap.strings.intern("active_allocated");
        b.segment = static_cast<std::uint32_t>(snap.segments.size());
        snap.blocks.push_back(b);
    }
    snap.segments.push_back(seg);
}

// A new stack: `under` with one more frame, innermost, `file`:`line` `name`.
inline snapshot::StackId stack_with_frame(snapshot::Snapshot& snap, snapshot::StackId under, const std::string& file,
                                          std::int64_t line, const std::string& name) {
    std::vector<snapshot::FrameId> frames{
        snap.frames.intern({snap.strings.intern(file), snap.strings.intern(name), line})};
    for (const auto f : snap.stacks.frames(under)) frames.push_back(f);
    return snap.stacks.intern(frames);
}

// A new stack: `under` with `outer` frames added outside it (outer[0] nearest), as a caller
// that wraps the whole of it (a framework's loop) adds them.
inline snapshot::StackId stack_with_outer_frames(
    snapshot::Snapshot& snap, snapshot::StackId under,
    const std::vector<std::tuple<std::string, std::int64_t, std::string>>& outer) {
    std::vector<snapshot::FrameId> frames;
    for (const auto f : snap.stacks.frames(under)) frames.push_back(f);
    for (const auto& [file, line, name] : outer)
        frames.push_back(snap.frames.intern({snap.strings.intern(file), snap.strings.intern(name), line}));
    return snap.stacks.intern(frames);
}

// Another checkout on another machine: the project root and the install prefix change.
inline std::function<std::string(std::string_view)> rerun_paths(std::string project_root) {
    return [root = std::move(project_root)](std::string_view name) {
        std::string s(name);
        if (const auto at = s.find("site-packages/"); at != std::string::npos)
            return "/opt/conda/envs/rerun/lib/python3.11/" + s.substr(at);
        if (!root.empty() && s.starts_with(root)) return "/home/someone-else/checkout-2/" + s.substr(root.size());
        return s;
    };
}

// The same files on a Windows machine: drive letter, backslashes, a venv's Lib\site-packages.
inline std::function<std::string(std::string_view)> windows_paths(std::string project_root) {
    return [root = std::move(project_root)](std::string_view name) {
        std::string s(name);
        if (!s.ends_with(".py")) return s;  // C++ frames and "??" stay
        if (const auto at = s.find("site-packages/"); at != std::string::npos)
            s = "D:/Dev/proj/.venv/Lib/" + s.substr(at);
        else if (!root.empty() && s.starts_with(root))
            s = "D:/Dev/proj/" + s.substr(root.size());
        for (char& c : s)
            if (c == '/') c = '\\';
        return s;
    };
}

// The model as a JSON snapshot, the shape json.dump(torch.cuda.memory._snapshot()) has.
inline std::string to_json(const snapshot::Snapshot& snap) {
    using nlohmann::json;
    auto frames_of = [&](snapshot::StackId stack) {
        json frames = json::array();
        for (auto f : snap.stacks.frames(stack)) {
            const auto& fr = snap.frames[f];
            frames.push_back({{"filename", snap.str(fr.filename)}, {"line", fr.line}, {"name", snap.str(fr.name)}});
        }
        return frames;
    };
    json segments = json::array();
    for (const auto& seg : snap.segments) {
        json blocks = json::array();
        for (const auto& b : snap.blocks_of(seg))
            blocks.push_back({{"address", b.address},
                              {"size", b.size},
                              {"requested_size", b.requested_size},
                              {"state", snap.str(b.state_name)},
                              {"frames", frames_of(b.stack)}});
        segments.push_back({{"device", seg.device},
                            {"address", seg.address},
                            {"total_size", seg.total_size},
                            {"stream", seg.stream},
                            {"segment_type", snap.str(seg.segment_type)},
                            {"blocks", blocks}});
    }
    json traces = json::array();
    for (std::size_t i = 0; i < snap.events.size(); ++i) {
        const auto& e = snap.events[i];
        while (traces.size() <= static_cast<std::size_t>(e.device)) traces.push_back(json::array());
        json entry = {{"action", snap.action_name(i)},
                      {"addr", e.addr},
                      {"size", e.size},
                      {"stream", snap.stream_of(e)},
                      {"frames", frames_of(e.stack)}};
        if (e.time_us >= 0) entry["time_us"] = e.time_us;
        traces[static_cast<std::size_t>(e.device)].push_back(entry);
    }
    return json{{"segments", segments}, {"device_traces", traces}}.dump();
}

inline std::filesystem::path write_temp(const std::string& name, const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() / ("memsnap_test_" + name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

}  // namespace memsnap::test
