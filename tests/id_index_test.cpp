// util::IdIndex against std::unordered_map over the same inserts and erases: erasing moves the
// entries after a gap back (no tombstones), which must keep every other id findable, also when
// the probe runs wrap around the end of the table and when every key shares one home slot.

#include <memsnap/util/id_index.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace {

using memsnap::util::IdIndex;

// Keys stored by id, as IdIndex's callers keep them; `hash_of` may collide on purpose.
template <class Hash>
void check_against_map(Hash hash_of, std::uint32_t key_space, int operations, unsigned seed) {
    IdIndex index;
    std::vector<std::uint64_t> keys;  // by id
    std::unordered_map<std::uint64_t, std::uint32_t> reference;
    std::mt19937 random(seed);
    const auto equal_to = [&](std::uint64_t key) { return [&keys, key](std::uint32_t id) { return keys[id] == key; }; };
    for (int op = 0; op < operations; ++op) {
        const std::uint64_t key = random() % key_space;
        const auto found = index.find(hash_of(key), equal_to(key));
        const auto expected = reference.find(key);
        REQUIRE(found.has_value() == (expected != reference.end()));
        if (found) REQUIRE(*found == expected->second);
        if (found && random() % 3 != 0) {
            REQUIRE(index.erase(hash_of(key), equal_to(key)));
            REQUIRE_FALSE(index.erase(hash_of(key), equal_to(key)));
            reference.erase(key);
        } else if (!found) {
            keys.push_back(key);
            const auto id = static_cast<std::uint32_t>(keys.size() - 1);
            index.insert(hash_of(key), id);
            reference[key] = id;
        }
        REQUIRE(index.size() == reference.size());
    }
    std::unordered_map<std::uint64_t, std::uint32_t> listed;
    index.for_each([&](std::uint32_t id) { listed[keys[id]] = id; });
    CHECK(listed == reference);
}

}  // namespace

TEST_CASE("IdIndex erase keeps every other id findable (against std::unordered_map)" * doctest::test_suite("unit")) {
    SUBCASE("spread hashes") {
        check_against_map([](std::uint64_t k) { return k * 0x9E3779B97F4A7C15ull; }, 5000, 60000, 1);
    }
    SUBCASE("runs of neighbouring homes that wrap around the table") {
        check_against_map([](std::uint64_t k) { return std::uint64_t{0xFFFFFFF0u} + k % 40; }, 300, 20000, 2);
    }
    SUBCASE("every key in one home slot") {
        check_against_map([](std::uint64_t) { return std::uint64_t{7}; }, 200, 8000, 3);
    }
}
