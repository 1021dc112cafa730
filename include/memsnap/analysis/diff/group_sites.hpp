#pragma once
// Stage 2 of the snapshot diff: (stack, size) groups gathered under their site, the one the
// StackIndex names (as `info` does), kept apart by category. Blocks without a stack are
// grouped by block size: they have no site.

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/diff/match_blocks.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>

#include <vector>

namespace memsnap::analysis {

// A site's blocks on one device, when the captures hold several: each device is judged
// against its own noise floor.
struct DeviceSiteCounts {
    std::uint16_t device = 0;
    std::int64_t before_blocks = 0, after_blocks = 0;
    std::int64_t before_bytes = 0, after_bytes = 0;
};

struct SiteGroups {
    SiteCounts change;  // counts, bytes, category and growth per step
    // (stack, size) groups, every device's blocks together (GroupKey::device is 0).
    std::vector<std::pair<GroupKey, GroupCounts>> groups;
    std::vector<DeviceSiteCounts> by_device;  // with BlockMatch::several_devices only
};

std::vector<SiteGroups> group_sites(const BlockMatch& match, const StackIndex& index, const util::Steps& steps);

// The distinct stacks of a site whose groups grew, with the bytes and blocks those groups
// grew by (one stack's groups of other sizes added up), in stack order: each stack once,
// however many block sizes it has.
struct StackGrowth {
    CanonStackId stack;
    std::int64_t bytes = 0, blocks = 0;
};
std::vector<StackGrowth> grown_stacks(const SiteGroups& site);

// delta / (B − A), or delta itself when steps are unknown.
double per_step(std::int64_t delta, const util::Steps& steps);

}  // namespace memsnap::analysis
