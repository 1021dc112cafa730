// `--format dot`: the calling-context graph of a stack profile for Graphviz, written with
// Boost.Graph's Graphviz writer. Frames are nodes with exclusive and inclusive bytes,
// caller->callee edges carry bytes, and frames below --node-fraction of the total are pruned
// (analysis::GrowthGraph::pruned).
#include "../format.hpp"
#include "pictures.hpp"
#include "profile_support.hpp"

#include <memsnap/analysis/sites/growth_graph.hpp>
#include <memsnap/util/format.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/graphviz.hpp>

#include <algorithm>
#include <functional>
#include <sstream>

namespace memsnap::report::detail {

namespace {

struct Node {
    const analysis::GrowthGraph::View::Node* data = nullptr;  // null: pruned
};
struct Edge {
    std::int64_t bytes = 0;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, Node, Edge>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using EdgeId = boost::graph_traits<Graph>::edge_descriptor;

// A DOT string: a quote or backslash is escaped, and a line break (which names cannot hold:
// they come through util::printable) becomes DOT's own "\n".
std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::string profile_dot(const analysis::StackProfile& p, analysis::Side side, double node_fraction) {
    analysis::GrowthGraph growth;
    const auto samples = analysis::sided(p, side);
    for (std::size_t i = 0; i < samples.size(); ++i) growth.add_stack(samples[i].first->frames, samples[i].second, i);
    const auto view = growth.pruned(node_fraction);
    // The kept nodes keep their vertex numbers, so the DOT ids are those of the whole graph.
    Graph g(view.vertex_count);
    for (const auto& n : view.nodes) g[n.id].data = &n;
    for (const auto& e : view.edges) g[boost::add_edge(e.from, e.to, g).first].bytes = e.bytes;
    const std::function<bool(Vertex)> kept = [&](Vertex v) { return g[v].data != nullptr; };
    const std::function<bool(EdgeId)> every_edge = [](EdgeId) { return true; };
    const boost::filtered_graph<Graph, std::function<bool(EdgeId)>, std::function<bool(Vertex)>> pruned(g, every_edge,
                                                                                                        kept);
    const std::string title = util::printable(profile_title(p) + ": " + side_measure(p, side));
    const auto label = [&](std::uint32_t f) { return frame_label(p.frame_table[f]); };
    const auto bytes = [](std::int64_t n) { return util::human_bytes(n); };
    const double total = std::max<double>(1, static_cast<double>(view.total));
    std::ostringstream out;
    boost::write_graphviz(
        out, pruned,
        [&](std::ostream& os, Vertex v) {
            const auto& d = *g[v].data;
            if (d.root) {
                os << "[label=" << quoted(title + "\n" + bytes(view.total)) << ", shape=box, style=bold]";
                return;
            }
            const double share = static_cast<double>(d.inclusive) / total;
            os << "[label=" << quoted(label(d.frame) + "\n" + bytes(d.exclusive) + " of " + bytes(d.inclusive))
               << ", shape=box, fontsize=" << static_cast<int>(10 + 14 * share) << ", tooltip="
               << quoted(label(d.frame) + ": " + std::to_string(d.inclusive) + " bytes inclusive, " +
                         std::to_string(d.exclusive) + " exclusive")
               << "]";
        },
        [&](std::ostream& os, EdgeId e) {
            const double share = static_cast<double>(g[e].bytes) / total;
            os << "[label=" << quoted(bytes(g[e].bytes)) << ", penwidth=" << 1 + static_cast<int>(4 * share) << "]";
        },
        [&](std::ostream& os) {
            os << "node [fontname=\"Helvetica\"];\n";
            os << "label=" << quoted(title + " (frames below " + bytes(view.threshold) + " left out)") << ";\n";
        });
    return out.str();
}

}  // namespace memsnap::report::detail
