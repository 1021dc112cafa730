#include <memsnap/error.hpp>
#include <memsnap/snapshot/model.hpp>

#include <limits>
#include <optional>

namespace memsnap::snapshot {

namespace {

// Allocator sizes are multiples of 512 (the smallest block), so any real size fits 31 bits
// as bytes or as units of 512.
std::optional<std::uint32_t> packed_size(std::int64_t size, std::uint32_t in_units) {
    if (size >= 0 && size < std::int64_t{1} << 31) return static_cast<std::uint32_t>(size);
    if (size > 0 && size % 512 == 0 && (size >> 9) < std::int64_t{1} << 31)
        return static_cast<std::uint32_t>(size >> 9) | in_units;
    return std::nullopt;
}

}  // namespace

void TraceEvents::set(std::size_t i, const TraceEvent& e) {
    Packed& p = packed_[i];
    const auto size = packed_size(e.size, size_in_units);
    bool fits = size && e.device >= 0 && e.device <= 0xFF && static_cast<std::uint64_t>(e.action()) < escaped;
    std::int64_t time = time_unrecorded;
    if (e.time_us != -1) {
        if (!has_time_base_) {
            time_base_ = e.time_us;
            has_time_base_ = true;
        }
        fits = fits && !__builtin_sub_overflow(e.time_us, time_base_, &time) && time > time_unrecorded &&
               time < -time_unrecorded;
    }
    if (fits) {
        p.addr = e.addr;
        p.meta = static_cast<std::uint64_t>(time) << 24 | static_cast<std::uint64_t>(e.device) << 16 |
                 static_cast<std::uint64_t>(e.stream()) << 4 | static_cast<std::uint64_t>(e.action());
        p.size = *size;
        p.stack = e.stack.value;
        return;
    }
    if ((p.meta & 0xF) == escaped) {
        whole_[p.stack] = e;
        return;
    }
    // Each whole event came from a trace entry of its own in the file, so a file that could
    // fill 2^32 of them would not fit in memory first; the check keeps the index honest.
    if (whole_.size() >= std::numeric_limits<std::uint32_t>::max())
        throw input_error("more than 2^32 trace events with values outside a real capture's range");
    p = {0, escaped, 0, static_cast<std::uint32_t>(whole_.size())};
    whole_.push_back(e);
}

void TraceEvents::set_device(std::size_t i, std::int16_t device) {
    Packed& p = packed_[i];
    if ((p.meta & 0xF) == escaped) {
        whole_[p.stack].device = device;
    } else if (device >= 0 && device <= 0xFF) {
        p.meta = (p.meta & ~(std::uint64_t{0xFF} << 16)) | static_cast<std::uint64_t>(device) << 16;
    } else {
        TraceEvent e = (*this)[i];
        e.device = device;
        set(i, e);
    }
}

}  // namespace memsnap::snapshot
