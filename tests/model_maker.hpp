#pragma once
// Hand-built snapshot models for unit tests of the analysis stages: a few segments and blocks
// with the stacks a test needs, without any file.

#include <memsnap/snapshot/model.hpp>

#include <string>
#include <tuple>
#include <vector>

namespace memsnap::test {

using FrameSpec = std::tuple<std::string, std::int64_t, std::string>;  // filename, line, name

class ModelMaker {
  public:
    ModelMaker() { snap_.source.path = "made.pickle"; }

    snapshot::StackId stack(const std::vector<FrameSpec>& frames) {
        std::vector<snapshot::FrameId> ids;
        for (const auto& [file, line, name] : frames)
            ids.push_back(snap_.frames.intern({snap_.strings.intern(file), snap_.strings.intern(name), line}));
        return snap_.stacks.intern(ids);
    }

    // A segment of `device` at `address` holding one block per (size, stack, live) entry.
    struct BlockSpec {
        std::int64_t size;
        snapshot::StackId stack;
        bool live = true;
    };
    void segment(int device, std::int64_t address, const std::vector<BlockSpec>& blocks) {
        snapshot::Segment seg;
        seg.device = device;
        seg.address = address;
        seg.segment_type = snap_.strings.intern("large");
        seg.first_block = static_cast<std::uint32_t>(snap_.blocks.size());
        seg.block_count = static_cast<std::uint32_t>(blocks.size());
        std::int64_t at = address;
        for (const auto& spec : blocks) {
            snapshot::Block b;
            b.address = at;
            b.size = b.requested_size = spec.size;
            b.stack = spec.stack;
            b.state = spec.live ? snapshot::BlockState::active_allocated : snapshot::BlockState::inactive;
            b.state_name = snap_.strings.intern(spec.live ? "active_allocated" : "inactive");
            b.segment = static_cast<std::uint32_t>(snap_.segments.size());
            snap_.blocks.push_back(b);
            at += spec.size;
        }
        seg.total_size = at - address;
        snap_.segments.push_back(seg);
    }

    snapshot::Snapshot& model() { return snap_; }

  private:
    snapshot::Snapshot snap_;
};

}  // namespace memsnap::test
