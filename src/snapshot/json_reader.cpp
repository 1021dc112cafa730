#include "json_reader.hpp"

#include <memsnap/error.hpp>
#include <memsnap/pickle/reader.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iterator>
#include <vector>

namespace memsnap::snapshot::detail {

namespace {

using pickle::Document;
using pickle::Kind;
using pickle::Value;

class SnapshotSax : public nlohmann::json_sax<nlohmann::json> {
  public:
    SnapshotSax(Document& doc, pickle::SealHook* hook, const pickle::Limits& limits, const std::string& name,
                std::size_t input_size)
        : doc_(doc), hook_(hook), limits_(limits), name_(name), held_limit_(limits.held_limit(input_size)) {}

    bool null() override { return add(Value::make_none()); }
    bool boolean(bool b) override { return add(Value::make_bool(b)); }
    bool number_integer(number_integer_t i) override { return add(Value::make_int(i)); }
    bool number_unsigned(number_unsigned_t u) override {
        if (u <= static_cast<std::uint64_t>(INT64_MAX)) return add(Value::make_int(static_cast<std::int64_t>(u)));
        Value v;
        v.kind = Kind::big_integer;
        v.u = u;
        return add(v);
    }
    bool number_float(number_float_t d, const string_t&) override { return add(Value::make_float(d)); }
    bool string(string_t& s) override { return add(text(s)); }
    bool binary(binary_t&) override { return add(Value::make_none()); }
    bool key(string_t& k) override { return add(text(k)); }
    bool start_object(std::size_t) override { return open(Kind::dict); }
    bool start_array(std::size_t) override { return open(Kind::list); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
        throw input_error(fmt::format("invalid JSON: {}", short_json_message(e.what())), name_,
                          position > 0 ? position - 1 : 0);
    }

  private:
    Value text(const std::string& s) {
        if (s.size() > limits_.max_string_length)
            throw input_error(fmt::format("a JSON string of {} bytes is over the limit (--max-string)", s.size()),
                              name_);
        return doc_.new_owned_string(s);
    }
    bool open(Kind kind) {
        if (open_.size() + 1 > limits_.max_depth)
            throw input_error(fmt::format("JSON nesting deeper than {} levels (--max-depth)", limits_.max_depth),
                              name_);
        open_.push_back(doc_.new_container(kind));
        return true;
    }
    bool close() {
        const Value done = open_.back();
        open_.pop_back();
        return add(done);
    }
    // Stores a complete value in the innermost open container (sealing it first), or makes
    // it the root.
    bool add(const Value& v) {
        const Value stored = pickle::seal(doc_, v, hook_);
        // A container the hook replaced is reachable no more (JSON shares nothing): its slot
        // serves the next one, as in the pickle reader, or a dump's millions of frame and
        // entry dicts would each keep theirs.
        if (v.is_container() && stored.kind != v.kind) doc_.recycle_slot(v);
        if (open_.empty()) {
            doc_.root = stored;
            return true;
        }
        const Value& parent = open_.back();
        auto& slot = doc_.slot(parent);
        slot.depth = std::max<std::uint16_t>(slot.depth, static_cast<std::uint16_t>(doc_.depth(v) + 1));
        auto& items = doc_.mutable_items(parent);
        if (items.size() >= limits_.max_container_length)
            throw input_error(fmt::format("a JSON container holds more than {} items (--max-container)",
                                          limits_.max_container_length),
                              name_);
        items.push_back(stored);
        doc_.count_items(1);
        if (doc_.held_bytes() > held_limit_)
            throw input_error(fmt::format("the file would make memsnap hold more than {} MiB of values at once: "
                                          "snapshots hold far less, so it is damaged or crafted",
                                          held_limit_ >> 20),
                              name_);
        return true;
    }

    Document& doc_;
    pickle::SealHook* hook_;
    const pickle::Limits& limits_;
    const std::string& name_;
    std::uint64_t held_limit_;
    std::vector<Value> open_;
};

// The input as nlohmann's parser walks it, one character at a time, telling `consumed` every
// pickle::consumed_every bytes how far it got: the pages behind it are released as the
// pickle reader's are, or a JSON snapshot (several times its pickle's size: JSON shares
// nothing) would stay resident.
class ReportingIterator {
  public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    ReportingIterator(const char* at, const char* begin, const std::function<void(std::uint64_t)>* consumed)
        : at_(at), begin_(begin), next_report_(begin + kReportEvery), consumed_(consumed) {}
    reference operator*() const { return *at_; }
    ReportingIterator& operator++() {
        if (++at_ >= next_report_) [[unlikely]] {
            if (consumed_ != nullptr && *consumed_) (*consumed_)(static_cast<std::uint64_t>(at_ - begin_));
            next_report_ += kReportEvery;
        }
        return *this;
    }
    ReportingIterator operator++(int) {
        ReportingIterator before = *this;
        ++*this;
        return before;
    }
    bool operator==(const ReportingIterator& other) const { return at_ == other.at_; }

  private:
    static constexpr auto kReportEvery = static_cast<std::ptrdiff_t>(pickle::consumed_every);
    const char* at_;
    const char* begin_;
    const char* next_report_;
    const std::function<void(std::uint64_t)>* consumed_;
};

}  // namespace

std::string short_json_message(std::string_view what) {
    return what.size() > 200 ? std::string(what.substr(0, 200)) + "..." : std::string(what);
}

void read_json(std::string_view input, Document& doc, pickle::SealHook* hook, const pickle::Limits& limits,
               const std::string& name, const std::function<void(std::uint64_t)>& consumed) {
    SnapshotSax sax(doc, hook, limits, name, input.size());
    try {
        const char* begin = input.data();
        nlohmann::json::sax_parse(ReportingIterator(begin, begin, &consumed),
                                  ReportingIterator(begin + input.size(), begin, &consumed), &sax);
    } catch (const nlohmann::json::exception& e) {
        // e.g. a number too large for any integer or double (out_of_range 406)
        std::string what = e.what();
        if (what.size() > 200) what = what.substr(0, 200) + "...";
        throw input_error(fmt::format("invalid JSON: {}", what), name);
    }
}

}  // namespace memsnap::snapshot::detail
