#include <memsnap/analysis/sites/growth_graph.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graph_traits.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

namespace memsnap::analysis {

namespace {

struct VertexData {
    std::uint32_t frame = 0;
    bool is_root = false;
    std::int64_t inclusive = 0;
    std::int64_t exclusive = 0;
    // Distinct sites below: the stacks of one site arrive one after another (add_stack), so
    // the last one seen is enough to count them.
    std::size_t sites = 0;
    std::size_t last_site = static_cast<std::size_t>(-1);
    std::uint64_t last_stack = 0;  // recursion: a frame counts once per stack (stacks number from 1)
    void count_site(std::size_t site) {
        if (site == last_site) return;
        last_site = site;
        ++sites;
    }
};

struct EdgeData {
    std::int64_t bytes = 0;
};

// Out-edges in a set: edge(u, v) is looked up once per frame of every stack, and a frame may
// have as many callees as there are sites.
using Graph = boost::adjacency_list<boost::setS, boost::vecS, boost::directedS, VertexData, EdgeData>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

}  // namespace

struct GrowthGraph::Impl {
    Graph graph;
    Vertex root;
    // Frame ids index a frame table, so they are dense: a vector maps them at 4 bytes a frame
    // (a hash map took 60, the most of a diff of a hundred thousand sites).
    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
    std::vector<std::uint32_t> vertex_of;
    std::int64_t total = 0;
    std::uint64_t stacks = 0;

    Impl() {
        root = boost::add_vertex(graph);
        graph[root].is_root = true;
    }

    Vertex vertex(std::uint32_t frame) {
        if (frame >= vertex_of.size()) vertex_of.resize(std::size_t{frame} + 1, kNone);
        auto& v = vertex_of[frame];
        if (v == kNone) {
            const Vertex added = boost::add_vertex(graph);
            graph[added].frame = frame;
            v = static_cast<std::uint32_t>(added);
        }
        return v;
    }

    void add_edge_bytes(Vertex from, Vertex to, std::int64_t bytes) {
        auto [edge, exists] = boost::edge(from, to, graph);
        if (!exists) edge = boost::add_edge(from, to, graph).first;
        graph[edge].bytes += bytes;
    }
};

GrowthGraph::GrowthGraph() : impl_(std::make_unique<Impl>()) {}
GrowthGraph::~GrowthGraph() = default;
GrowthGraph::GrowthGraph(GrowthGraph&&) noexcept = default;
GrowthGraph& GrowthGraph::operator=(GrowthGraph&&) noexcept = default;

void GrowthGraph::add_stack(std::span<const std::uint32_t> frames, std::int64_t bytes, std::size_t site) {
    if (bytes <= 0) return;
    auto& g = impl_->graph;
    impl_->total += bytes;
    g[impl_->root].inclusive += bytes;
    g[impl_->root].count_site(site);
    Vertex caller = impl_->root;
    const std::uint64_t stack = ++impl_->stacks;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
        const Vertex v = impl_->vertex(*it);
        impl_->add_edge_bytes(caller, v, bytes);
        if (std::exchange(g[v].last_stack, stack) != stack) {
            g[v].inclusive += bytes;
            g[v].count_site(site);
        }
        caller = v;
    }
    if (!frames.empty()) g[impl_->vertex(frames.front())].exclusive += bytes;
}

std::int64_t GrowthGraph::total_growth() const { return impl_->total; }

std::optional<GrowthGraph::FrameGrowth> GrowthGraph::convergence(const std::function<bool(std::uint32_t)>& eligible,
                                                                 double min_share, std::size_t min_sites) const {
    const auto& g = impl_->graph;
    if (impl_->total <= 0) return std::nullopt;
    const auto threshold = static_cast<std::int64_t>(min_share * static_cast<double>(impl_->total));
    std::optional<FrameGrowth> best;
    std::set<Vertex> visited{impl_->root};
    Vertex at = impl_->root;
    while (true) {
        // Follow the heaviest callee edge; ties go to the smaller frame id for determinism.
        std::optional<Vertex> next;
        std::int64_t next_bytes = -1;
        for (auto [e, end] = boost::out_edges(at, g); e != end; ++e) {
            const Vertex t = boost::target(*e, g);
            if (visited.count(t)) continue;
            const std::int64_t bytes = g[*e].bytes;
            if (bytes > next_bytes || (bytes == next_bytes && g[t].frame < g[*next].frame)) {
                next = t;
                next_bytes = bytes;
            }
        }
        if (!next || g[*next].inclusive < threshold) break;
        at = *next;
        visited.insert(at);
        const auto& d = g[at];
        if (d.sites >= min_sites && eligible(d.frame)) best = FrameGrowth{d.frame, d.inclusive, d.exclusive, d.sites};
    }
    return best;
}

GrowthGraph::View GrowthGraph::pruned(double node_fraction) const {
    const auto& g = impl_->graph;
    View view;
    view.total = impl_->total;
    view.threshold = static_cast<std::int64_t>(std::ceil(node_fraction * static_cast<double>(impl_->total)));
    view.vertex_count = boost::num_vertices(g);
    const auto kept = [&](Vertex v) {
        return v == impl_->root || (g[v].inclusive > 0 && g[v].inclusive >= view.threshold);
    };
    for (auto [v, end] = boost::vertices(g); v != end; ++v)
        if (kept(*v)) view.nodes.push_back({*v, g[*v].frame, *v == impl_->root, g[*v].inclusive, g[*v].exclusive});
    for (auto [e, end] = boost::edges(g); e != end; ++e) {
        const Vertex from = boost::source(*e, g), to = boost::target(*e, g);
        if (kept(from) && kept(to) && g[*e].bytes > 0) view.edges.push_back({from, to, g[*e].bytes});
    }
    return view;
}

}  // namespace memsnap::analysis
