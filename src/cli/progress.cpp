#include "progress.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <chrono>
#include <mutex>

#include <unistd.h>

namespace memsnap::cli {

capture::Capture load_with_progress(const capture::InputName& input, const pickle::Limits& limits,
                                    std::uint64_t limit) {
    static std::mutex terminal;
    if (::isatty(STDERR_FILENO) != 1) return capture::load_capture(input, limits, limit);
    const std::string& path = input.path;
    const auto start = std::chrono::steady_clock::now();
    bool shown = false;
    double shown_at = -1;
    const auto progress = [&](std::uint64_t done, std::uint64_t total) {
        if (total <= (std::uint64_t{64} << 20)) return;  // small files need no progress
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (shown && seconds - shown_at < 0.1) return;  // the reader calls every MiB
        shown_at = seconds;
        const std::lock_guard lock(terminal);
        fmt::print(stderr, "\r\x1b[Kmemsnap: reading {}: {} of {} ({}/s)", util::printable(path),
                   util::human_bytes(static_cast<std::int64_t>(done)),
                   util::human_bytes(static_cast<std::int64_t>(total)),
                   util::human_bytes(seconds > 0 ? static_cast<std::int64_t>(static_cast<double>(done) / seconds) : 0));
        shown = true;
    };
    const auto clear = [&] {
        if (!shown) return;
        const std::lock_guard lock(terminal);
        fmt::print(stderr, "\r\x1b[K");
    };
    try {
        auto capture = capture::load_capture(input, limits, limit, progress);
        clear();
        return capture;
    } catch (...) {
        clear();
        throw;
    }
}

}  // namespace memsnap::cli
