// The sites a tally gives allocations resolved together (where it keeps the sites it resolved
// by stack, size and request) against each allocation resolved alone: the same site, category
// and stack flag, on every real capture's replay and on made traces whose keys outnumber what
// the tally keeps.

#include "analysis/trace/site_tally.hpp"

#include "analysis/trace/step_temporaries.hpp"
#include "model_maker.hpp"
#include "support.hpp"

#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/snapshot/load.hpp>

#include <filesystem>
#include <random>
#include <set>

using namespace memsnap;
using analysis::StackIndex;
using analysis::detail::Allocation;
using analysis::detail::SiteTally;

namespace {

// Every allocation's site in `tally` is the one a tally of it alone gives. Returns how many
// allocations were checked.
std::size_t check_each_alone(const std::vector<Allocation>& allocations, const SiteTally& tally, StackIndex& index,
                             const std::vector<bool>& temporary) {
    for (std::size_t i = 0; i < allocations.size(); ++i) {
        CAPTURE(i);
        const std::vector<Allocation> one{allocations[i]};
        const std::vector<bool> one_temporary =
            temporary.empty() ? std::vector<bool>{} : std::vector<bool>{static_cast<bool>(temporary[i])};
        const SiteTally alone(one, index, one_temporary);
        REQUIRE(alone.site_count() == 1);
        const auto& together = tally.site(tally.site_of(i));
        CHECK(together.site == alone.site(0).site);
        CHECK(together.category == alone.site(0).category);
        CHECK(together.has_stack == alone.site(0).has_stack);
    }
    return allocations.size();
}

}  // namespace

TEST_SUITE("real") {
    TEST_CASE("site tally: allocations resolved together get the sites each gets alone on every real capture") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        std::size_t checked = 0;
        for (const auto& file : test::files_in(test::real_dir() / "snapshots")) {
            if (file.extension() != ".pickle" && file.extension() != ".pkl") continue;
            CAPTURE(file.string());
            const auto snap = snapshot::load_snapshot(file.string());
            if (snap.events.empty()) continue;
            analysis::AnalysisOptions options;
            std::set<int> devices;
            for (std::size_t i = 0; i < snap.events.size(); ++i) devices.insert(snap.events.device_at(i));
            for (const int device : devices) {
                CAPTURE(device);
                const auto r = analysis::detail::replay(snap, device);
                StackIndex index({&snap}, options.rules, options.stacks);
                const auto temporary = analysis::detail::step_temporaries(r, index);
                const SiteTally tally(r.allocations, index, temporary);
                checked += check_each_alone(r.allocations, tally, index, temporary);
            }
        }
        // 19 real snapshots when this was written, 32,355 replayed allocations.
        CHECK(checked >= 30000);
    }
}  // TEST_SUITE

TEST_SUITE("unit") {
    TEST_CASE(
        "site tally: keys that differ in one field resolve as each does alone where the tally keeps them in one slot") {
        test::ModelMaker m;
        std::vector<snapshot::StackId> stacks;
        for (int k = 0; k < 60; ++k)
            stacks.push_back(m.stack({{"train.py", 10 + k, "forward"}, {"torch/optim/adam.py", 90 + k % 3, "step"}}));
        for (int k = 0; k < 60; ++k) stacks.push_back(m.stack({{"model.py", 200 + k, "forward"}}));
        m.segment(0, 1 << 20, {{512, stacks[0]}, {4096, stacks[70]}});
        const auto& snap = m.model();
        // cuBLAS's default workspace: a forward's block of this request is a workspace, of any
        // other an activation.
        constexpr std::int64_t kWorkspace = 4096 * 1024 * 2 + 16 * 1024 * 8;
        std::mt19937_64 random(7);
        std::vector<Allocation> allocations;
        std::vector<bool> temporary;
        const auto add = [&](const Allocation& a, bool is_temporary) {
            allocations.push_back(a);
            allocations.back().address = 512 * static_cast<std::int64_t>(allocations.size());
            temporary.push_back(is_temporary);
        };
        // Each allocation and a twin that differs in one field of the key and resolves to
        // another site: over 1,024 slots, 10,000 pairs of each kind share a slot about ten times.
        for (int i = 0; i < 40000; ++i) {
            Allocation a;
            a.stack = stacks[random() % stacks.size()];
            // Sizes from a wide range: each pair's key is its own, and pairs meet in a slot at random.
            a.size = 512 * static_cast<std::int64_t>(1 + random() % 100000);
            a.requested = a.size - 100;
            bool is_temporary = random() % 2 == 0;
            Allocation twin = a;
            bool twin_temporary = is_temporary;
            switch (i % 4) {
                case 0:
                    twin_temporary = !is_temporary;
                    break;
                case 1:  // a forward's request of the workspace's size, beside another request
                    a.stack = twin.stack = stacks[60 + random() % 60];
                    twin.requested = kWorkspace;
                    is_temporary = twin_temporary = false;
                    break;
                case 2:  // blocks without a stack, by size: one request, two sizes
                    a.stack = twin.stack = snapshot::no_stack;
                    twin.size = a.size + 512;
                    break;
                default:  // made before the trace, named by the stack that freed it
                    a.stack = twin.stack = snapshot::no_stack;
                    twin.freed_by = stacks[random() % 60];
                    break;
            }
            add(a, is_temporary);
            add(twin, twin_temporary);
        }
        analysis::AnalysisOptions options;
        StackIndex index({&snap}, options.rules, options.stacks);
        const SiteTally tally(allocations, index, temporary);
        CHECK(check_each_alone(allocations, tally, index, temporary) == allocations.size());
        const SiteTally without_temporaries(allocations, index);
        CHECK(check_each_alone(allocations, without_temporaries, index, {}) == allocations.size());
        // The twins are sites of their own: the workspace, the sizes without a stack.
        std::set<std::string> names;
        for (std::size_t s = 0; s < tally.site_count(); ++s)
            names.insert(tally.site(static_cast<std::uint32_t>(s)).site.label());
        CHECK(names.size() > 100);
    }
}  // TEST_SUITE
