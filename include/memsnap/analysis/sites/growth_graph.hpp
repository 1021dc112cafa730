#pragma once
// A calling-context graph of growth (Boost.Graph): frames are vertices, caller->callee edges
// carry the bytes that grew below them. Used to find where many growing sites converge, and
// drawn by the report layer as a DOT call graph.

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

    // The graph pruned as pprof -dot prunes, for a picture: frames whose inclusive bytes are
    // below `node_fraction` of the total are left out, with their edges.
    struct View {
        struct Node {
            std::size_t id = 0;  // stable vertex number, below vertex_count
            std::uint32_t frame = 0;
            bool root = false;  // the one node above every outermost frame
            std::int64_t inclusive = 0, exclusive = 0;
        };
        struct Edge {
            std::size_t from = 0, to = 0;  // vertex numbers
            std::int64_t bytes = 0;
        };
        std::size_t vertex_count = 0;
        std::vector<Node> nodes;  // the kept ones, by id
        std::vector<Edge> edges;  // the kept ones, by source then target
        std::int64_t total = 0;
        std::int64_t threshold = 0;  // bytes below which frames were left out
    };
    View pruned(double node_fraction) const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace memsnap::analysis
