#include <memsnap/error.hpp>
#include <memsnap/snapshot/viz_page.hpp>
#include <memsnap/util/checked.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

namespace memsnap::snapshot {

namespace {

// nlohmann's message of a JSON error, cut to 200 bytes: it ends with the last token, which may
// be as long as the file.
std::string short_json_message(std::string_view what) {
    return what.size() > 200 ? std::string(what.substr(0, 200)) + "..." : std::string(what);
}

constexpr std::uint32_t kNone = UINT32_MAX;
constexpr std::string_view kFreeOnly = "alloc not recorded, stack trace for free:";
constexpr std::string_view kBeforeHistory = "<block was allocated before _record_history was enabled>";

enum class Field : std::uint8_t {
    other,
    actions,
    elements_size,
    elements_info,
    suffix_table,
    string_table,
    initially_allocated
};

struct AllocData {
    std::vector<std::uint32_t> actions, elements_info, initially_allocated;
    std::vector<std::int64_t> elements_size;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> suffix_table;  // (string, rest or kNone)
    std::vector<std::string> string_table;
    std::set<std::string> keys;
    bool categories = false;
};

// The position nlohmann's parser has reached, for messages.
class CountingIterator {
  public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;
    CountingIterator(const char* at, const char** cursor) : at_(at), cursor_(cursor) {}
    reference operator*() const { return *at_; }
    CountingIterator& operator++() {
        *cursor_ = ++at_;
        return *this;
    }
    CountingIterator operator++(int) {
        CountingIterator before = *this;
        ++*this;
        return before;
    }
    bool operator==(const CountingIterator& other) const { return at_ == other.at_; }

  private:
    const char* at_;
    const char** cursor_;
};

class AllocDataSax : public nlohmann::json_sax<nlohmann::json> {
  public:
    AllocDataSax(AllocData& out, const pickle::Limits& limits, const std::string& name, std::string_view page,
                 const char* const* cursor)
        : out_(out), limits_(limits), name_(name), page_(page), cursor_(cursor) {}

    bool null() override {
        if (depth_ == 2 && field_ == Field::elements_info) return push_index(kNone), true;
        if (depth_ == 3 && field_ == Field::suffix_table && pair_items_ == 1) return pair_item(kNone), true;
        if (depth_ == 1 || field_ == Field::other) return true;  // e.g. "elements_category": null
        refuse("a null");
    }
    bool boolean(bool) override { return scalar("true or false"); }
    bool number_integer(number_integer_t i) override { return integer(i); }
    bool number_unsigned(number_unsigned_t u) override {
        if (u > static_cast<std::uint64_t>(INT64_MAX)) return scalar("an integer past 2^63");
        return integer(static_cast<std::int64_t>(u));
    }
    bool number_float(number_float_t, const string_t&) override { return scalar("a fraction"); }
    bool binary(binary_t&) override { return scalar("binary data"); }
    bool string(string_t& s) override {
        if (s.size() > limits_.max_string_length)
            throw input_error(fmt::format("a string of {} bytes is over the limit (--max-string)", s.size()), name_,
                              offset());
        if (depth_ == 2 && field_ == Field::string_table) {
            count_item(out_.string_table.size());
            out_.string_table.push_back(std::move(s));
            return true;
        }
        return scalar("a string");
    }
    bool key(string_t& k) override {
        if (depth_ != 1) return true;
        field_ = Field::other;
        if (k == "actions") field_ = Field::actions;
        if (k == "elements_size") field_ = Field::elements_size;
        if (k == "elements_info") field_ = Field::elements_info;
        if (k == "suffix_table") field_ = Field::suffix_table;
        if (k == "string_table") field_ = Field::string_table;
        if (k == "initially_allocated") field_ = Field::initially_allocated;
        if (out_.keys.size() < 64) out_.keys.insert(k.substr(0, 64));
        key_ = k.substr(0, 64);
        return true;
    }
    bool start_object(std::size_t) override {
        if (depth_ == 0) {
            depth_ = 1;
            return true;
        }
        if (depth_ >= 1 && field_ != Field::other) refuse("an object");
        return deeper();
    }
    bool start_array(std::size_t) override {
        if (depth_ == 0) refuse("a list instead of an object");
        if (depth_ == 1 && (key_ == "categories" || key_ == "elements_category")) out_.categories = true;
        if (depth_ == 1 || field_ == Field::other) return deeper();
        if (depth_ == 2 && field_ == Field::suffix_table) {
            count_item(out_.suffix_table.size());
            out_.suffix_table.emplace_back(kNone, kNone);
            pair_items_ = 0;
            return deeper();
        }
        refuse("a list");
    }
    bool end_object() override { return shallower(); }
    bool end_array() override {
        if (depth_ == 3 && field_ == Field::suffix_table && pair_items_ != 2)
            throw input_error(fmt::format("alloc_data's suffix_table entry {} holds {} items, not 2",
                                          out_.suffix_table.size() - 1, pair_items_),
                              name_, offset());
        return shallower();
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
        throw input_error(fmt::format("the page's alloc_data is not valid JSON ({})", short_json_message(e.what())),
                          name_, offset());
    }

  private:
    std::uint64_t offset() const {
        return static_cast<std::uint64_t>(*cursor_ - page_.data()) - (*cursor_ > page_.data() ? 1 : 0);
    }
    [[noreturn]] void refuse(std::string_view what) const {
        throw input_error(fmt::format("alloc_data's {} holds {} where the page's viewer expects {}", key_, what,
                                      field_ == Field::string_table ? "strings" : "integers"),
                          name_, offset());
    }
    bool scalar(std::string_view what) {
        if (depth_ == 1 || field_ == Field::other) return true;
        refuse(what);
    }
    bool deeper() {
        if (++depth_ > limits_.max_depth)
            throw input_error(fmt::format("JSON nesting deeper than {} levels (--max-depth)", limits_.max_depth), name_,
                              offset());
        return true;
    }
    bool shallower() {
        if (--depth_ == 1) field_ = Field::other;
        return true;
    }
    void count_item(std::size_t held) const {
        if (held >= limits_.max_container_length || held >= kNone - 1)
            throw input_error(fmt::format("alloc_data's {} holds more than {} items (--max-container)", key_,
                                          std::min<std::uint64_t>(limits_.max_container_length, kNone - 1)),
                              name_, offset());
    }
    void push_index(std::uint32_t v) {
        auto* list = field_ == Field::actions               ? &out_.actions
                     : field_ == Field::elements_info       ? &out_.elements_info
                     : field_ == Field::initially_allocated ? &out_.initially_allocated
                                                            : nullptr;
        if (list == nullptr) refuse("an index");
        count_item(list->size());
        list->push_back(v);
    }
    void pair_item(std::uint32_t v) {
        if (pair_items_ >= 2)
            throw input_error(
                fmt::format("alloc_data's suffix_table entry {} holds more than 2 items", out_.suffix_table.size() - 1),
                name_, offset());
        auto& entry = out_.suffix_table.back();
        (pair_items_ == 0 ? entry.first : entry.second) = v;
        ++pair_items_;
    }
    bool integer(std::int64_t i) {
        if (depth_ == 1 || field_ == Field::other) return true;
        if (depth_ == 2 && field_ == Field::elements_size) {
            count_item(out_.elements_size.size());
            out_.elements_size.push_back(i);
            return true;
        }
        if (i < 0 || i >= kNone)
            throw input_error(fmt::format("alloc_data's {} holds the index {}, which indexes nothing", key_, i), name_,
                              offset());
        const auto v = static_cast<std::uint32_t>(i);
        if (depth_ == 3 && field_ == Field::suffix_table) {
            pair_item(v);
            return true;
        }
        if (depth_ == 2) {
            push_index(v);
            return true;
        }
        refuse("an integer");
    }

    AllocData& out_;
    const pickle::Limits& limits_;
    const std::string& name_;
    std::string_view page_;
    const char* const* cursor_;
    std::uint32_t depth_ = 0;
    Field field_ = Field::other;
    std::string key_ = "alloc_data";
    std::size_t pair_items_ = 0;
};

// Where `alloc_data = {` starts, or npos.
std::size_t alloc_data_start(std::string_view page) {
    constexpr std::string_view key = "alloc_data";
    for (std::size_t at = page.find(key); at != std::string_view::npos; at = page.find(key, at + 1)) {
        std::size_t pos = at + key.size();
        while (pos < page.size() && (page[pos] == ' ' || page[pos] == '\t')) ++pos;
        if (pos >= page.size() || page[pos] != '=') continue;
        ++pos;
        while (pos < page.size() && std::isspace(static_cast<unsigned char>(page[pos]))) ++pos;
        if (pos < page.size() && page[pos] == '{') return pos;
    }
    return std::string_view::npos;
}

// "b7f00000000_1 1.0KiB allocation (1024 bytes)": the block's address (hexadecimal).
std::optional<std::int64_t> header_address(std::string_view header) {
    if (header.size() < 3 || (header[0] != 'b' && header[0] != 's')) return std::nullopt;
    const auto underscore = header.find('_');
    if (underscore == std::string_view::npos || underscore < 2 || underscore > 17) return std::nullopt;
    std::uint64_t address = 0;
    const auto [ptr, ec] = std::from_chars(header.data() + 1, header.data() + underscore, address, 16);
    if (ec != std::errc() || ptr != header.data() + underscore) return std::nullopt;
    return static_cast<std::int64_t>(address);
}

// "file.py:12:name" as _memory_viz.py wrote a frame; the file may hold ':' (C:\...), the name
// too (at::native::empty): the first ":<digits>:" splits them.
Frame parse_frame(Snapshot& snap, std::string_view text) {
    for (std::size_t colon = text.find(':'); colon != std::string_view::npos; colon = text.find(':', colon + 1)) {
        std::size_t end = colon + 1;
        while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
        if (end == colon + 1 || end >= text.size() || text[end] != ':') continue;
        std::int64_t line = 0;
        const auto [ptr, ec] = std::from_chars(text.data() + colon + 1, text.data() + end, line);
        if (ec != std::errc()) continue;
        return {snap.strings.intern(text.substr(0, colon)), snap.strings.intern(text.substr(end + 1)), line};
    }
    return {snap.strings.intern(""), snap.strings.intern(text), 0};
}

std::int64_t block_size(std::int64_t requested) {  // torch rounds to 512 bytes, as the replay does
    constexpr std::int64_t kMinBlock = 512;
    if (requested <= kMinBlock) return kMinBlock;
    const auto up = util::checked_add(requested, kMinBlock - 1);
    return up ? *up / kMinBlock * kMinBlock : requested;
}

class Builder {
  public:
    Builder(const AllocData& d, Snapshot& snap, const std::string& name, std::size_t input_bytes)
        : d_(d), snap_(snap), name_(name), frame_budget_((std::uint64_t{8} << 20) + input_bytes / 2) {
        frame_of_string_.assign(d.string_table.size(), kNone);
        stack_of_suffix_.assign(d.suffix_table.size(), kNone);
    }

    void check() const {
        const std::size_t n = d_.elements_size.size();
        if (d_.elements_info.size() != n)
            throw input_error(fmt::format("alloc_data's elements_info holds {} entries but elements_size {}: the "
                                          "tables disagree",
                                          d_.elements_info.size(), n),
                              name_);
        for (std::size_t i = 0; i < n; ++i) {
            if (d_.elements_size[i] < 0)
                throw input_error(
                    fmt::format("alloc_data's element {} has a negative size ({})", i, d_.elements_size[i]), name_);
            if (d_.elements_info[i] != kNone && d_.elements_info[i] >= d_.suffix_table.size())
                throw input_error(fmt::format("alloc_data's element {} names suffix_table entry {}, of {}", i,
                                              d_.elements_info[i], d_.suffix_table.size()),
                                  name_);
        }
        for (std::size_t i = 0; i < d_.suffix_table.size(); ++i) {
            const auto [sid, rest] = d_.suffix_table[i];
            if (sid >= d_.string_table.size())
                throw input_error(fmt::format("alloc_data's suffix_table entry {} names string {}, of {}", i, sid,
                                              d_.string_table.size()),
                                  name_);
            // _memory_viz.py interns a stack's rest before it: an entry names earlier ones only,
            // so no chain loops.
            if (rest != kNone && rest >= i)
                throw input_error(fmt::format("alloc_data's suffix_table entry {} continues at entry {}, which is not "
                                              "an earlier one",
                                              i, rest),
                                  name_);
        }
        const auto check_list = [&](const std::vector<std::uint32_t>& list, std::string_view what) {
            for (std::size_t k = 0; k < list.size(); ++k)
                if (list[k] >= n)
                    throw input_error(
                        fmt::format("alloc_data's {} entry {} names element {}, of {}", what, k, list[k], n), name_);
        };
        check_list(d_.actions, "actions");
        check_list(d_.initially_allocated, "initially_allocated");
    }

    void build() {
        const std::size_t n = d_.elements_size.size();
        // Addresses from the elements' first lines; any without one: all numbered instead.
        std::vector<std::int64_t> address(n, 0);
        bool all_addressed = true;
        for (std::size_t i = 0; i < n && all_addressed; ++i) {
            const auto info = d_.elements_info[i];
            const auto a = info == kNone ? std::nullopt : header_address(d_.string_table[d_.suffix_table[info].first]);
            if (a)
                address[i] = *a;
            else
                all_addressed = false;
        }
        if (!all_addressed) {
            for (std::size_t i = 0; i < n; ++i) address[i] = static_cast<std::int64_t>(i + 1) << 9;
            snap_.warnings.push_back(
                "the page's elements do not name their addresses (a profile_plot page?): numbered instead");
        }
        std::int64_t total = 0;
        for (const auto size : d_.elements_size)
            total = util::or_refuse(util::checked_add(total, block_size(size)), "the page's element sizes", name_);

        // 0: not seen, 1: live, 2: freed.
        std::vector<std::uint8_t> state(n, 0);
        for (const auto e : d_.initially_allocated) {
            if (state[e] != 0)
                throw input_error(fmt::format("alloc_data's initially_allocated names element {} twice", e), name_);
            state[e] = 1;
        }
        std::vector<std::uint8_t> initial = state;
        snap_.events.reserve(d_.actions.size());
        for (std::size_t k = 0; k < d_.actions.size(); ++k) {
            const auto e = d_.actions[k];
            if (state[e] == 2)
                throw input_error(fmt::format("alloc_data's actions entry {} acts on element {} a third time (an "
                                              "element is allocated once and freed once)",
                                              k, e),
                                  name_);
            TraceEvent ev;
            ev.addr = address[e];
            ev.size = d_.elements_size[e];
            ev.device = 0;
            ev.set_action(state[e] == 0 ? TraceAction::alloc : TraceAction::free_completed);
            // A free of an element allocated in the trace: the page keeps no stack for it. One of
            // an element allocated before the trace: the element's stack is the free's.
            if (state[e] == 0 || initial[e]) ev.stack = stack_of(e);
            state[e] = static_cast<std::uint8_t>(state[e] + 1);
            snap_.events.push_back(ev);
        }
        std::vector<std::uint32_t> live;
        for (std::uint32_t i = 0; i < n; ++i)
            if (state[i] == 1) live.push_back(i);
        std::stable_sort(live.begin(), live.end(), [&](auto a, auto b) { return address[a] < address[b]; });
        const StringId active = snap_.strings.intern("active_allocated");
        std::int64_t segment_size = 0;
        for (const auto e : live) {
            Block b;
            b.address = address[e];
            b.size = block_size(d_.elements_size[e]);
            b.requested_size = d_.elements_size[e];
            b.stack = stack_of(e);
            b.state = BlockState::active_allocated;
            b.state_name = active;
            segment_size += b.size;
            snap_.blocks.push_back(b);
        }
        if (!live.empty()) {
            Segment s;
            s.device = 0;
            s.address = snap_.blocks.front().address;
            s.total_size = segment_size;
            s.block_count = static_cast<std::uint32_t>(live.size());
            s.placeholder = true;
            s.segment_type = snap_.strings.intern("");
            snap_.segments.push_back(s);
        }
    }

  private:
    // The element's stack: its chain past the first line (the element's own description) and
    // the note _memory_viz.py may add after it.
    StackId stack_of(std::uint32_t element) {
        auto id = d_.elements_info[element];
        if (id == kNone) return no_stack;
        id = d_.suffix_table[id].second;
        if (id != kNone) {
            const auto& text = d_.string_table[d_.suffix_table[id].first];
            if (text == kFreeOnly || text == kBeforeHistory) id = d_.suffix_table[id].second;
        }
        if (id == kNone) return no_stack;
        if (stack_of_suffix_[id] != kNone) return StackId(stack_of_suffix_[id]);
        scratch_.clear();
        for (auto at = id; at != kNone; at = d_.suffix_table[at].second) {
            if (++frames_walked_ > frame_budget_)
                throw input_error(fmt::format("the page's stacks unfold to more than {} frames: refused as damaged or "
                                              "crafted",
                                              frame_budget_),
                                  name_);
            scratch_.push_back(frame_of(d_.suffix_table[at].first));
        }
        const StackId stack = snap_.stacks.intern(scratch_);
        stack_of_suffix_[id] = stack.value;
        return stack;
    }
    FrameId frame_of(std::uint32_t sid) {
        if (frame_of_string_[sid] == kNone)
            frame_of_string_[sid] = snap_.frames.intern(parse_frame(snap_, d_.string_table[sid])).value;
        return FrameId(frame_of_string_[sid]);
    }

    const AllocData& d_;
    Snapshot& snap_;
    const std::string& name_;
    std::vector<std::uint32_t> frame_of_string_, stack_of_suffix_;
    std::vector<FrameId> scratch_;
    std::uint64_t frame_budget_;
    std::uint64_t frames_walked_ = 0;
};

}  // namespace

bool is_alloc_data_page(std::string_view page) {
    return page.find("\"base64\"") == std::string_view::npos && alloc_data_start(page) != std::string_view::npos;
}

Snapshot read_alloc_data_page(std::string_view page, const std::string& name, const pickle::Limits& limits) {
    const auto start = alloc_data_start(page);
    if (start == std::string_view::npos) throw input_error("the page holds no alloc_data = {...}", name);
    AllocData data;
    const char* cursor = page.data() + start;
    AllocDataSax sax(data, limits, name, page, &cursor);
    try {
        // The object ends the JSON; the page's script goes on after it.
        nlohmann::json::sax_parse(CountingIterator(page.data() + start, &cursor),
                                  CountingIterator(page.data() + page.size(), &cursor), &sax,
                                  nlohmann::json::input_format_t::json, false);
    } catch (const nlohmann::json::exception& e) {
        throw input_error(fmt::format("the page's alloc_data is not valid JSON ({})", short_json_message(e.what())),
                          name, static_cast<std::uint64_t>(cursor - page.data()));
    }
    for (const char* key :
         {"actions", "elements_size", "elements_info", "suffix_table", "string_table", "initially_allocated"})
        if (!data.keys.count(key))
            throw input_error(fmt::format("the page's alloc_data has no \"{}\": not a _memory_viz trace_plot page "
                                          "memsnap knows",
                                          key),
                              name, start);

    Snapshot snap;
    snap.source.path = name;
    snap.source.encoding = "json";
    snap.source.writer = "_memory_viz.py trace_plot page (alloc_data)";
    snap.source.file_bytes = page.size();
    snap.source.generation = "torch 2.0 _memory_viz trace_plot page (alloc_data, replayed)";
    snap.source.features.assign(data.keys.begin(), data.keys.end());
    snap.top_level_keys.assign(data.keys.begin(), data.keys.end());
    snap.trace_devices = 1;
    Builder builder(data, snap, name, page.size());
    builder.check();
    snap.warnings.push_back(
        "a torch 2.0 _memory_viz trace_plot page: it carries allocations and their stacks only, no reserved memory "
        "(segments), times, device or OOMs; memsnap replayed it as device 0, reserved reads 0");
    builder.build();
    if (data.categories)
        snap.warnings.push_back("the page's categories (profile_plot) are not read; memsnap names its own");
    return snap;
}

}  // namespace memsnap::snapshot
