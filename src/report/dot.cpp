// `--format dot`: the calling-context graph of a stack profile for Graphviz, written with
// Boost.Graph (analysis/growth_graph). Frames are nodes with exclusive and inclusive bytes,
// caller->callee edges carry bytes, and frames below --node-fraction of the total are pruned.
#include "format.hpp"
#include "profile_support.hpp"
#include "writers.hpp"

#include <memsnap/analysis/growth_graph.hpp>
#include <memsnap/util/format.hpp>

namespace memsnap::report::detail {

std::string profile_dot(const analysis::StackProfile& p, analysis::Side side, double node_fraction) {
    analysis::GrowthGraph graph;
    const auto samples = analysis::sided(p, side);
    for (std::size_t i = 0; i < samples.size(); ++i) graph.add_stack(samples[i].first->frames, samples[i].second, i);
    const std::string measure = side_measure(p, side);
    return graph.to_dot([&](std::uint32_t f) { return frame_label(p.frame_table[f]); },
                        [](std::int64_t bytes) { return util::human_bytes(bytes); }, p.title + ": " + measure,
                        node_fraction);
}

}  // namespace memsnap::report::detail
