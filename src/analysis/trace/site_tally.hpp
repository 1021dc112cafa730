#pragma once
// Internal to `trace`: the site of each replayed allocation, resolved once, and what is live
// at one moment by site and category.

#include "trace_replay.hpp"

#include <memsnap/analysis/sites/live_blocks.hpp>
#include <memsnap/analysis/sites/moments.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/limits.hpp>
#include <memsnap/util/hash.hpp>

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace memsnap::analysis::detail {

// Sites and categories of the allocations selected by `keep` (those live at one moment), by
// bytes. Each allocation's site is resolved once, so a moment costs one pass of additions.
class SiteTally {
  public:
    // `temporary`: per allocation, an optimizer step's temporaries (step_temporaries), or empty.
    SiteTally(const std::vector<Allocation>& allocations, StackIndex& index, const std::vector<bool>& temporary = {})
        : allocations_(allocations) {
        SiteIds ids;
        FreedSites freed_sites;
        ResolvedSites resolved(allocations.size());
        site_of_.reserve(allocations.size());
        for (std::size_t i = 0; i < allocations.size(); ++i) {
            const auto& a = allocations[i];
            if (a.stack == snapshot::no_stack && a.freed_by != snapshot::no_stack)
                if (const auto site = freed_site(index, index.stack(0, a.freed_by), ids, freed_sites)) {
                    site_of_.push_back(*site);
                    continue;
                }
            const bool is_temporary = !temporary.empty() && temporary[i];
            auto& seen = resolved.slot(a, is_temporary);
            if (seen.matches(a, is_temporary)) {
                site_of_.push_back(seen.site);
                continue;
            }
            const auto canon = index.stack(0, a.stack);
            const auto category = is_temporary ? Category::temporary : index.category(0, a.stack, a.asked());
            const auto [at, added] = ids.try_emplace({site_token(index, canon, a.size), category},
                                                     static_cast<std::uint32_t>(sites_.size()));
            if (added) {
                LiveSite s;
                s.site = site_key(index, canon, a.size, category);
                s.category = category;
                s.has_stack = !without_stack(canon);
                sites_.push_back(std::move(s));
            }
            site_of_.push_back(at->second);
            seen = {a.stack, is_temporary, a.size, a.asked(), at->second, true};
        }
    }

    template <class Keep>
    MomentUsage usage(Keep&& keep, std::size_t top) const {
        MomentUsage out;
        std::vector<std::int64_t> bytes(sites_.size(), 0), count(sites_.size(), 0);
        for (std::size_t i = 0; i < allocations_.size(); ++i) {
            const auto& a = allocations_[i];
            if (!keep(a)) continue;
            out.category_bytes[static_cast<std::size_t>(sites_[site_of_[i]].category)] += a.size;
            bytes[site_of_[i]] += a.size;
            ++count[site_of_[i]];
        }
        std::vector<std::uint32_t> held;
        for (std::uint32_t s = 0; s < sites_.size(); ++s)
            if (count[s] != 0) held.push_back(s);
        const std::size_t limit = std::min(held.size(), top == 0 ? limits::trace_sites : top);
        std::partial_sort(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(limit), held.end(),
                          [&](std::uint32_t a, std::uint32_t b) {
                              return bytes[a] != bytes[b] ? bytes[a] > bytes[b] : sites_[a].site < sites_[b].site;
                          });
        for (std::size_t k = limit; k < held.size(); ++k) {
            ++out.sites_not_listed;
            out.bytes_not_listed += bytes[held[k]];
            out.allocations_not_listed += count[held[k]];
        }
        for (std::size_t k = 0; k < limit; ++k) {
            LiveSite s = sites_[held[k]];
            s.rank = k + 1;
            s.bytes = bytes[held[k]];
            s.allocations = count[held[k]];
            out.sites.push_back(std::move(s));
        }
        return out;
    }

    std::size_t site_count() const { return sites_.size(); }
    const LiveSite& site(std::uint32_t id) const { return sites_[id]; }
    std::uint32_t site_of(std::size_t allocation) const { return site_of_[allocation]; }

  private:
    using SiteIds = std::map<std::pair<std::uint64_t, Category>, std::uint32_t>;

    // The site of allocations of one stack, block size and request (and temporary or not), the
    // last resolved in its slot: a long trace repeats a few hundred stacks over hundreds of
    // thousands of allocations, each resolved above through the index and a map. A cache, so
    // the sites and their order are those of resolving each allocation.
    struct ResolvedSite {
        snapshot::StackId stack;
        bool temporary = false;
        std::int64_t size = 0, asked = 0;
        std::uint32_t site = 0;
        bool filled = false;
        bool matches(const Allocation& a, bool is_temporary) const {
            return filled && stack == a.stack && temporary == is_temporary && size == a.size && asked == a.asked();
        }
    };
    struct ResolvedSites {
        // Up to 1,024 slots, fewer for fewer allocations (a tally of one holds one).
        explicit ResolvedSites(std::size_t allocations)
            : slots(std::bit_ceil(std::clamp<std::size_t>(allocations, 1, 1024))) {}
        std::vector<ResolvedSite> slots;
        ResolvedSite& slot(const Allocation& a, bool is_temporary) {
            auto h = util::mix_hash(a.stack.value, static_cast<std::uint64_t>(a.size));
            h = util::mix_hash(h, static_cast<std::uint64_t>(a.asked()) << 1 | (is_temporary ? 1 : 0));
            return slots[h & (slots.size() - 1)];
        }
    };

    // A block made before the trace has no site, but where `zero_grad` frees it, it is a
    // gradient of the step before (optimizer.zero_grad and Module.zero_grad set them to None).
    static bool freed_by_zero_grad(const StackIndex& index, CanonStackId stack) {
        const auto frames = index.frames(stack);
        return std::any_of(frames.begin(), frames.end(),
                           [&](CanonFrameId f) { return index.frame(f).name == "zero_grad"; });
    }
    // Those blocks' one site. Stack sites' tokens and size classes (the top bit) stay below
    // this token.
    std::uint32_t previous_gradients(SiteIds& ids) {
        const auto [at, added] =
            ids.try_emplace({std::uint64_t{3} << 62, Category::gradient}, static_cast<std::uint32_t>(sites_.size()));
        if (added) {
            LiveSite s;
            s.site.name = "<made before the trace, freed by zero_grad: gradients of the step before>";
            s.site.category = Category::gradient;
            s.category = Category::gradient;
            s.has_stack = false;
            sites_.push_back(std::move(s));
        }
        return at->second;
    }

    // The sites of blocks made before the trace, by the stack that freed them (resolved once per
    // stack: a long trace frees thousands such blocks from a few places), and by that place's label.
    struct FreedSites {
        std::map<std::uint32_t, std::optional<std::uint32_t>> by_stack;
        std::map<std::string, std::uint32_t> by_label;
    };

    // A block made before the trace has no site, but where it was freed says what it was:
    // zero_grad's frees are the step before's gradients; any other place (the state an optimizer
    // step replaced, a buffer a layer reallocated) names an unknown site after it, not as made
    // there. nullopt for a free without a stack.
    std::optional<std::uint32_t> freed_site(const StackIndex& index, CanonStackId freed, SiteIds& ids,
                                            FreedSites& known) {
        const auto [cached, added] = known.by_stack.try_emplace(freed.value);
        if (!added) return cached->second;
        if (freed_by_zero_grad(index, freed)) return cached->second = previous_gradients(ids);
        if (without_stack(freed)) return std::nullopt;
        const auto label = index.site(freed).label();
        const auto [at, first] = known.by_label.try_emplace(label, static_cast<std::uint32_t>(sites_.size()));
        if (first) {
            LiveSite s;
            s.site.name = "<made before the trace, freed at " + label + ">";
            s.category = Category::unknown;
            s.has_stack = false;
            sites_.push_back(std::move(s));
        }
        return cached->second = at->second;
    }

    const std::vector<Allocation>& allocations_;
    std::vector<LiveSite> sites_;         // one per (site, category), unranked
    std::vector<std::uint32_t> site_of_;  // per allocation
};

}  // namespace memsnap::analysis::detail
