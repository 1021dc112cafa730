#include <memsnap/analysis/growth_graph.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/graph_traits.hpp>
#include <boost/graph/graphviz.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <unordered_map>

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
    std::unordered_map<std::uint32_t, Vertex> vertex_of;
    std::int64_t total = 0;

    Impl() {
        root = boost::add_vertex(graph);
        graph[root].is_root = true;
    }

    Vertex vertex(std::uint32_t frame) {
        auto [it, inserted] = vertex_of.try_emplace(frame);
        if (inserted) {
            it->second = boost::add_vertex(graph);
            graph[it->second].frame = frame;
        }
        return it->second;
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
    std::set<Vertex> seen;  // recursion: count a frame once per stack
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
        const Vertex v = impl_->vertex(*it);
        impl_->add_edge_bytes(caller, v, bytes);
        if (seen.insert(v).second) {
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

std::string GrowthGraph::to_dot(const std::function<std::string(std::uint32_t)>& label,
                                const std::function<std::string(std::int64_t)>& bytes, const std::string& title,
                                double node_fraction) const {
    const auto& g = impl_->graph;
    const auto threshold = static_cast<std::int64_t>(std::ceil(node_fraction * static_cast<double>(impl_->total)));
    const auto kept = [&](Vertex v) { return v == impl_->root || (g[v].inclusive > 0 && g[v].inclusive >= threshold); };
    const auto kept_edge = [&](boost::graph_traits<Graph>::edge_descriptor e) {
        return kept(boost::source(e, g)) && kept(boost::target(e, g)) && g[e].bytes > 0;
    };
    const boost::filtered_graph<Graph, std::function<bool(boost::graph_traits<Graph>::edge_descriptor)>,
                                std::function<bool(Vertex)>>
        pruned(g, kept_edge, kept);
    // DOT strings are quoted: a quote or backslash in a name is escaped.
    const auto quoted = [](const std::string& text) {
        std::string out = "\"";
        for (const char c : text) {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        return out + "\"";
    };
    const double total = std::max<double>(1, static_cast<double>(impl_->total));
    std::ostringstream out;
    boost::write_graphviz(
        out, pruned,
        [&](std::ostream& os, Vertex v) {
            const auto& d = g[v];
            if (v == impl_->root) {
                os << "[label=" << quoted(title + "\\n" + bytes(impl_->total)) << ", shape=box, style=bold]";
                return;
            }
            const double share = static_cast<double>(d.inclusive) / total;
            os << "[label=" << quoted(label(d.frame) + "\\n" + bytes(d.exclusive) + " of " + bytes(d.inclusive))
               << ", shape=box, fontsize=" << static_cast<int>(10 + 14 * share) << ", tooltip="
               << quoted(label(d.frame) + ": " + std::to_string(d.inclusive) + " bytes inclusive, " +
                         std::to_string(d.exclusive) + " exclusive")
               << "]";
        },
        [&](std::ostream& os, boost::graph_traits<Graph>::edge_descriptor e) {
            const double share = static_cast<double>(g[e].bytes) / total;
            os << "[label=" << quoted(bytes(g[e].bytes)) << ", penwidth=" << 1 + static_cast<int>(4 * share) << "]";
        },
        [&](std::ostream& os) {
            os << "node [fontname=\"Helvetica\"];\n";
            os << "label=" << quoted(title + " (frames below " + bytes(threshold) + " left out)") << ";\n";
        });
    return out.str();
}

}  // namespace memsnap::analysis
