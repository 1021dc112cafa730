#pragma once
// Two captures compared: snapshot diffs in stages (match blocks, group sites, explain, rank) and
// memory_summary/memory_stats diffs. Uses judge and sites.

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/diff/explain.hpp>
#include <memsnap/analysis/diff/group_sites.hpp>
#include <memsnap/analysis/diff/match_blocks.hpp>
#include <memsnap/analysis/diff/rank.hpp>
#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/analysis/diff/stats_diff.hpp>
