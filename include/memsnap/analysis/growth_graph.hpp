#pragma once
// A calling-context graph of growth (Boost.Graph): frames are vertices, caller->callee edges
// carry the bytes that grew below them. Used to find where many growing sites converge.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace memsnap::analysis {

class GrowthGraph {
  public:
    GrowthGraph();
    ~GrowthGraph();
    GrowthGraph(GrowthGraph&&) noexcept;
    GrowthGraph& operator=(GrowthGraph&&) noexcept;

    // Adds one grown stack: `frames` innermost first (canonical frame ids), `bytes` > 0, and
    // the index of the site it belongs to. The stacks of one site are added one after another.
    void add_stack(std::span<const std::uint32_t> frames, std::int64_t bytes, std::size_t site);

    struct FrameGrowth {
        std::uint32_t frame = 0;
        std::int64_t inclusive = 0;  // growth of stacks through this frame
        std::int64_t exclusive = 0;  // growth of stacks whose innermost frame this is
        std::size_t sites = 0;       // distinct growing sites below it
    };
    std::int64_t total_growth() const;

    // The deepest frame accepted by `eligible` that at least `min_share` of all growth passes
    // through and that covers at least `min_sites` sites: walks the heaviest caller->callee
    // edges from the outermost frames. nullopt when no such frame exists.
    std::optional<FrameGrowth> convergence(const std::function<bool(std::uint32_t)>& eligible, double min_share,
                                           std::size_t min_sites) const;

    // The graph in Graphviz DOT (Boost.Graph's writer), pruned as pprof -dot prunes: frames
    // whose inclusive bytes are below `node_fraction` of the total are left out, with their
    // edges. `label(frame)` names a frame; `bytes(n)` formats a byte count.
    std::string to_dot(const std::function<std::string(std::uint32_t)>& label,
                       const std::function<std::string(std::int64_t)>& bytes, const std::string& title,
                       double node_fraction) const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace memsnap::analysis
