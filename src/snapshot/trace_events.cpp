#include <memsnap/error.hpp>
#include <memsnap/snapshot/model.hpp>

#include <limits>

namespace memsnap::snapshot {

void TraceEvents::set(std::size_t i, const TraceEvent& e) {
    Packed& p = packed_[i];
    // Real sizes below 16 MiB are any byte count; larger ones are the allocator's multiples of 512.
    std::uint64_t size = 0;
    bool fits = e.size >= 0;
    if (fits && e.size < std::int64_t{1} << (size_bits - 1))
        size = static_cast<std::uint64_t>(e.size);
    else if (fits && e.size % 512 == 0 && (e.size >> 9) < std::int64_t{1} << (size_bits - 1))
        size = static_cast<std::uint64_t>(e.size >> 9) | size_in_units;
    else
        fits = false;
    fits = fits && e.action() != TraceAction::oom && static_cast<std::uint64_t>(e.action()) < escaped &&
           e.device >= 0 && e.device <= 0xF && e.stream() <= 0xF && e.stack.value <= stack_mask &&
           e.addr % addr_unit == 0;
    if (fits && !has_addr_base_ && e.addr != 0) {
        addr_base_ = e.addr;
        has_addr_base_ = true;
    }
    std::int64_t addr = addr_zero * addr_unit;
    if (e.addr != 0)
        fits = fits && !__builtin_sub_overflow(e.addr, addr_base_, &addr) && addr / addr_unit > addr_zero &&
               addr / addr_unit < addr_span;
    std::int64_t time = time_unrecorded;
    if (fits && e.time_us != -1) {
        const std::size_t chunk = i >> chunk_bits;
        if (chunk >= chunk_time_.size()) chunk_time_.resize(chunk + 1, chunk_unset);
        if (chunk_time_[chunk] == chunk_unset && e.time_us != chunk_unset) chunk_time_[chunk] = e.time_us;
        fits = chunk_time_[chunk] != chunk_unset && !__builtin_sub_overflow(e.time_us, chunk_time_[chunk], &time) &&
               time > time_unrecorded && time < -time_unrecorded;
    }
    if (fits) {
        p.place = static_cast<std::uint64_t>(addr / addr_unit) << size_bits | size;
        p.meta = static_cast<std::uint64_t>(time) << (64 - time_bits) | std::uint64_t{e.stack.value} << 12 |
                 static_cast<std::uint64_t>(e.device) << 8 | static_cast<std::uint64_t>(e.stream()) << 4 |
                 static_cast<std::uint64_t>(e.action());
        return;
    }
    if ((p.meta & 0xF) == escaped) {
        whole_[p.place] = e;
        return;
    }
    // Each whole event came from a trace entry of its own in the file, so a file that could
    // fill 2^32 of them would not fit in memory first; the check keeps the index honest.
    if (whole_.size() >= std::numeric_limits<std::uint32_t>::max())
        throw input_error("more than 2^32 trace events with values outside a real capture's range");
    p = {whole_.size(), escaped};
    whole_.push_back(e);
}

void TraceEvents::set_device(std::size_t i, std::int16_t device) {
    Packed& p = packed_[i];
    if ((p.meta & 0xF) == escaped) {
        whole_[p.place].device = device;
    } else if (device >= 0 && device <= 0xF) {
        p.meta = (p.meta & ~(std::uint64_t{0xF} << 8)) | static_cast<std::uint64_t>(device) << 8;
    } else {
        TraceEvent e = (*this)[i];
        e.device = device;
        set(i, e);
    }
}

}  // namespace memsnap::snapshot
