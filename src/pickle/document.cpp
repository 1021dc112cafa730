#include <memsnap/pickle/document.hpp>

#include <algorithm>

namespace memsnap::pickle {

const std::vector<Value> Document::no_items_{};

const Value* Document::find(const Value& dict, std::string_view key) const {
    const Value d = resolve(dict);
    if (d.kind != Kind::dict) return nullptr;
    const auto& kv = item_store_[slots_[d.u].items];
    // Later keys win, as in Python; snapshot dicts hold a handful of keys.
    for (std::size_t i = kv.size(); i >= 2; i -= 2) {
        const Value& k = kv[i - 2];
        if (k.kind == Kind::string && text(k) == key) return &kv[i - 1];
    }
    return nullptr;
}

std::uint16_t Document::depth(const Value& v) const { return v.is_container() ? slots_[v.u].depth : 0; }

Value Document::new_container(Kind kind) {
    std::uint32_t items;
    if (!free_item_lists_.empty()) {
        items = free_item_lists_.back();
        free_item_lists_.pop_back();
    } else {
        items = static_cast<std::uint32_t>(item_store_.size());
        item_store_.emplace_back();
    }
    ++live_containers_;
    Slot s;
    s.replacement.kind = Kind::unset;
    s.items = items;
    s.kind = kind;
    Value v;
    v.kind = kind;
    if (!free_slots_.empty()) {
        v.u = free_slots_.back();
        free_slots_.pop_back();
        slots_[v.u] = s;
    } else {
        slots_.push_back(s);
        v.u = slots_.size() - 1;
    }
    return v;
}

void Document::release_items(const Value& container) {
    Slot& s = slots_[container.u];
    auto& items = item_store_[s.items];
    live_items_ -= std::min<std::uint64_t>(live_items_, items.size());
    live_containers_ -= live_containers_ > 0 ? 1 : 0;
    // Small lists keep their capacity for the next container: no allocation in steady state.
    if (items.capacity() > 4096)
        std::vector<Value>().swap(items);
    else
        items.clear();
    free_item_lists_.push_back(s.items);
}

void Document::consume(const Value& child, const Value& tombstone) {
    if (!child.is_container()) return;
    Slot& s = slots_[child.u];
    if (!s.sealed || s.replacement.kind != Kind::unset) return;
    s.replacement = tombstone;
    release_items(child);
    // The slot itself is reused only when no memo entry or copy can reach it again.
    if (s.memo_index == Slot::no_memo) recycle_slot(child);
}

Value Document::new_owned_string(std::string_view text) {
    Value v;
    v.kind = Kind::string;
    v.flags = 1;
    v.length = static_cast<std::uint32_t>(text.size());
    if (recent_strings_.empty()) recent_strings_.resize(4096);
    // A direct-mapped cache: file names and keys repeat in every frame of a JSON dump.
    auto& recent = recent_strings_[std::hash<std::string_view>()(text) & (recent_strings_.size() - 1)];
    if (recent.length == text.size() && std::string_view(owned_strings_).substr(recent.offset, recent.length) == text) {
        v.u = recent.offset;
        return v;
    }
    v.u = owned_strings_.size();
    owned_strings_.append(text);
    recent = {v.u, v.length};
    return v;
}

Value Document::new_input_string(std::uint64_t offset, std::uint32_t length, Kind kind) {
    if (noting_) [[unlikely]]
        noted_.push_back({offset, length});
    Value v;
    v.kind = kind;
    v.length = length;
    v.u = offset;
    return v;
}

void Document::keep_strings_before(std::uint64_t offset) {
    // Strings are made in input order: the ones to copy are the oldest noted.
    std::size_t k = noted_kept_;
    for (; k < noted_.size() && noted_[k].offset < offset; ++k) {
        const Span& span = noted_[k];
        // Memoized again at the same offset (a crafted file), or read before: one copy.
        if (!kept_offsets_.empty() && kept_offsets_.back() >= span.offset) continue;
        kept_offsets_.push_back(span.offset);
        kept_at_.push_back(span.length == 0 ? "" : kept_.store(input_.substr(span.offset, span.length)).data());
    }
    noted_kept_ = k;
    // Drop the copied spans now and then, so that noting costs no more than the copies.
    if (noted_kept_ > 4096 && noted_kept_ * 2 > noted_.size()) {
        noted_.erase(noted_.begin(), noted_.begin() + static_cast<std::ptrdiff_t>(noted_kept_));
        noted_kept_ = 0;
    }
    kept_below_ = std::max(kept_below_, offset);
}

std::string_view Document::kept_text(const Value& v) const {
    const auto at = std::lower_bound(kept_offsets_.begin(), kept_offsets_.end(), v.u);
    // Every string below kept_below_ was noted and copied; an offset that was not is no
    // string of this document's, and reads as empty rather than as dropped bytes.
    if (at == kept_offsets_.end() || *at != v.u) return {};
    return {kept_at_[static_cast<std::size_t>(at - kept_offsets_.begin())], v.length};
}

Value seal(Document& doc, const Value& v, SealHook* hook) {
    if (!v.is_container()) return v;
    Slot& s = doc.slot(v);
    if (s.sealed) return s.replacement.kind != Kind::unset ? s.replacement : v;
    s.sealed = true;
    if (hook == nullptr) return v;
    if (auto replacement = hook->on_seal(doc, v)) {
        hook->after_replace(doc, v, *replacement);
        doc.slot(v).replacement = *replacement;
        doc.release_items(v);
        return *replacement;
    }
    return v;
}

}  // namespace memsnap::pickle
