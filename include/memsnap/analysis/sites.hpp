#pragma once
// What one capture holds, before any judgement: the site rules (what is user code, which frame
// names a site), the stack index that normalises and classifies frames across one or two
// captures, memory categories, live blocks, totals, pools, the calling-context graph of growth,
// stack profiles for pictures, and the memory_summary/memory_stats tables of a device. Uses
// snapshot and stats only.

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/growth_graph.hpp>
#include <memsnap/analysis/sites/live_blocks.hpp>
#include <memsnap/analysis/sites/moments.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/snapshot_info.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/sites/stacks.hpp>
#include <memsnap/analysis/sites/stats_tables.hpp>
#include <memsnap/analysis/sites/totals.hpp>
