#include <memsnap/report/model.hpp>

namespace memsnap::report {

Value Value::flag(bool v) {
    Value out;
    out.kind = Kind::flag;
    out.integer = v ? 1 : 0;
    return out;
}

namespace {

Value whole(Value::Kind kind, std::int64_t v) {
    Value out;
    out.kind = kind;
    out.integer = v;
    return out;
}

Value fractional(Value::Kind kind, double v) {
    Value out;
    out.kind = kind;
    out.real = v;
    return out;
}

Value spelled(Value::Kind kind, std::string v) {
    Value out;
    out.kind = kind;
    out.text = std::move(v);
    return out;
}

}  // namespace

Value Value::count(std::int64_t v) { return whole(Kind::count, v); }
Value Value::count(std::int64_t v, std::string unit) {
    auto out = whole(Kind::count, v);
    out.unit = std::move(unit);
    return out;
}
Value Value::signed_count(std::int64_t v) { return whole(Kind::signed_count, v); }
Value Value::bytes(std::int64_t v) { return whole(Kind::bytes, v); }
Value Value::signed_bytes(std::int64_t v) { return whole(Kind::signed_bytes, v); }
Value Value::share(double v) { return fractional(Kind::share, v); }
Value Value::seconds(double v) { return fractional(Kind::seconds, v); }
Value Value::text_of(std::string v) { return spelled(Kind::text, std::move(v)); }
Value Value::word(std::string_view v) { return spelled(Kind::word, std::string(v)); }
Value Value::verdict(std::string_view v) { return spelled(Kind::verdict, std::string(v)); }
Value Value::json(std::string v) { return spelled(Kind::json, std::move(v)); }

Value Value::numbers(std::vector<std::int64_t> v) {
    Value out;
    out.kind = Kind::numbers;
    out.list = std::make_shared<const std::vector<std::int64_t>>(std::move(v));
    return out;
}

Value Value::number(double v, int decimals) {
    auto out = fractional(Kind::number, v);
    out.decimals = decimals;
    return out;
}

Value Value::rate(double bytes_per_unit, bool per_step) {
    auto out = fractional(Kind::rate, bytes_per_unit);
    out.per_step = per_step;
    return out;
}

Value Value::frame(std::string filename, std::int64_t line, std::string name, bool python) {
    auto out = spelled(Kind::frame, std::move(filename));
    out.integer = line;
    out.name = std::move(name);
    out.python = python;
    return out;
}

Value Value::range(ByteRange r) {
    auto out = whole(Kind::range, r.low);
    out.high = r.high;
    return out;
}

Value Value::count_range(ByteRange r) {
    auto out = whole(Kind::count_range, r.low);
    out.high = r.high;
    return out;
}

Value Value::change_range(ByteRange r, bool bytes) {
    auto out = bytes ? range(r) : count_range(r);
    out.change = true;
    return out;
}

Node Node::of(std::string key, Value value, std::string label) {
    Node n;
    n.kind = Kind::value;
    n.key = std::move(key);
    n.value = std::move(value);
    n.label = std::move(label);
    return n;
}

Node Node::object(std::string key, Layout layout, std::string label) {
    Node n;
    n.kind = Kind::object;
    n.key = std::move(key);
    n.layout = layout;
    n.label = std::move(label);
    return n;
}

Node Node::list(std::string key, Layout layout, std::string label) {
    Node n = object(std::move(key), layout, std::move(label));
    n.kind = Kind::list;
    return n;
}

Node& Node::add(Node node) {
    items.push_back(std::move(node));
    return items.back();
}

Node& Node::add(std::string field_key, Value field_value, std::string field_label) {
    return add(of(std::move(field_key), std::move(field_value), std::move(field_label)));
}

}  // namespace memsnap::report
