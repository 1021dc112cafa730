#include <memsnap/stats/keys.hpp>
#include <memsnap/stats/stat_map.hpp>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace memsnap::stats {

const std::vector<std::string>& keys::vocabulary() {
    static const std::vector<std::string> all = [] {
        std::vector<std::string> out;
        for (auto a : stat_arrays)
            for (auto p : pools)
                for (auto m : metrics) out.push_back(std::string(a) + "." + std::string(p) + "." + std::string(m));
        for (auto o : oversize)
            for (auto m : metrics) out.push_back(std::string(o) + "." + std::string(m));
        for (auto s : scalars) out.emplace_back(s);
        std::sort(out.begin(), out.end());
        return out;
    }();
    return all;
}

StatMap::StatMap(const std::map<std::string, ByteRange, std::less<>>& values) {
    entries_.reserve(values.size());
    for (const auto& [key, range] : values) entries_.push_back({key_of(key), range});
}

std::string_view StatMap::key_text(std::uint32_t key) const {
    const auto& known = keys::vocabulary();  // a key of it costs an index
    return key < known.size() ? std::string_view(known[key]) : std::string_view(extra_[key - known.size()]);
}

std::uint32_t StatMap::key_of(std::string_view text) {
    const auto& known = keys::vocabulary();  // a key of it costs an index
    if (const auto it = std::lower_bound(known.begin(), known.end(), text); it != known.end() && *it == text)
        return static_cast<std::uint32_t>(it - known.begin());
    extra_.emplace_back(text);
    return static_cast<std::uint32_t>(known.size() + extra_.size() - 1);
}

const StatMap::Entry* StatMap::lookup(std::string_view key) const {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                                     [this](const Entry& e, std::string_view k) { return key_text(e.key) < k; });
    return it != entries_.end() && key_text(it->key) == key ? &*it : nullptr;
}

StatMap::const_iterator StatMap::find(std::string_view key) const {
    const Entry* e = lookup(key);
    return e ? const_iterator(this, e) : end();
}

const ByteRange& StatMap::at(std::string_view key) const {
    const Entry* e = lookup(key);
    if (!e) throw std::out_of_range("StatMap::at: no such key");
    return e->range;
}

void StatMap::set(std::string_view key, ByteRange range) {
    if (const Entry* e = lookup(key)) {
        entries_[static_cast<std::size_t>(e - entries_.data())].range = range;
        return;
    }
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                                     [this](const Entry& e, std::string_view k) { return key_text(e.key) < k; });
    const auto at = it - entries_.begin();
    const std::uint32_t id = key_of(key);
    entries_.insert(entries_.begin() + at, Entry{id, range});
}

bool operator==(const StatMap& a, const StatMap& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
               return x.first == y.first && x.second == y.second;
           });
}

}  // namespace memsnap::stats
