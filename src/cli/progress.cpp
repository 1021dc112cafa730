#include "progress.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <vector>

#include <unistd.h>

namespace memsnap::cli {

namespace {

using Clock = std::chrono::steady_clock;
using Stage = capture::ReadProgress::Stage;

// Work worth a progress line: a snapshot over 64 MiB to read, or a compressed file over
// 8 MiB to decompress (captures compress 5 to 20 times).
bool worth_showing(const capture::ReadProgress& p) {
    return p.total > (p.stage == Stage::reading ? std::uint64_t{64} << 20 : std::uint64_t{8} << 20);
}

// The one progress line of the files being read at once (diff reads two, trend and ranks
// one per core): a single file by name, several as one sum, so that files read together
// never take turns on the line.
class Board {
  public:
    static Board& get() {
        static Board board;
        return board;
    }

    // What load `id` reports, in the stage it began at `start`; an entry with no work worth
    // showing leaves the line.
    void update(const void* id, const std::string& path, const capture::ReadProgress& p, Clock::time_point start) {
        const std::lock_guard lock(mutex_);
        const auto now = Clock::now();
        Entry* entry = find(id);
        if (!worth_showing(p)) {
            if (entry) remove(id, now);
            return;
        }
        bool changed = false;
        if (!entry) {
            entries_.push_back({id, path, p, start});
            entry = &entries_.back();
            changed = true;
        } else if (entry->progress.stage != p.stage) {
            changed = true;
        }
        entry->progress = p;
        entry->start = start;
        if (changed || !shown_ || now - drawn_ >= std::chrono::milliseconds(100)) draw(now);
    }

    // Load `id` is done: the line shows the others, or is cleared.
    void finish(const void* id) {
        const std::lock_guard lock(mutex_);
        if (find(id)) remove(id, Clock::now());
    }

  private:
    struct Entry {
        const void* id;
        std::string path;
        capture::ReadProgress progress;
        Clock::time_point start;  // of its stage
    };
    std::mutex mutex_;
    std::vector<Entry> entries_;
    bool shown_ = false;
    Clock::time_point drawn_;

    Entry* find(const void* id) {
        for (auto& e : entries_)
            if (e.id == id) return &e;
        return nullptr;
    }

    void remove(const void* id, Clock::time_point now) {
        std::erase_if(entries_, [id](const Entry& e) { return e.id == id; });
        if (!entries_.empty()) return draw(now);
        if (shown_) fmt::print(stderr, "\r\x1b[K");
        std::fflush(stderr);
        shown_ = false;
    }

    static std::int64_t rate(const Entry& e, Clock::time_point now) {
        const double seconds = std::chrono::duration<double>(now - e.start).count();
        return seconds > 0 ? static_cast<std::int64_t>(static_cast<double>(e.progress.done) / seconds) : 0;
    }

    static std::string bytes(std::uint64_t n) { return util::human_bytes(static_cast<std::int64_t>(n)); }

    void draw(Clock::time_point now) {
        std::string line;
        if (entries_.size() == 1) {
            const auto& e = entries_.front();
            const bool decompressing = e.progress.stage == Stage::decompressing;
            line = fmt::format("memsnap: {} {}: {} of {}{} ({}/s)", decompressing ? "decompressing" : "reading",
                               util::printable(e.path), bytes(e.progress.done), bytes(e.progress.total),
                               decompressing ? " compressed" : "", util::human_bytes(rate(e, now)));
        } else {
            std::uint64_t done = 0, total = 0;
            std::int64_t speed = 0;
            for (const auto& e : entries_) {
                done += e.progress.done;
                total += e.progress.total;
                speed += rate(e, now);
            }
            line = fmt::format("memsnap: reading {} files: {} of {} ({}/s)", entries_.size(), bytes(done), bytes(total),
                               util::human_bytes(speed));
        }
        fmt::print(stderr, "\r\x1b[K{}", line);
        std::fflush(stderr);
        shown_ = true;
        drawn_ = now;
    }
};

}  // namespace

capture::Capture load_with_progress(const capture::InputName& input, const pickle::Limits& limits, std::uint64_t limit,
                                    const stats::TableSink& tables) {
    if (::isatty(STDERR_FILENO) != 1) return capture::load_capture(input, limits, limit, {}, tables);
    auto& board = Board::get();
    const char entry = 0;
    const void* id = &entry;  // this load's own, while it runs
    // A stage's rate is from the end of the one before (the last report), or from the start.
    auto last = Clock::now(), stage_start = last;
    auto stage = Stage::reading;
    bool reported = false;
    const auto progress = [&](const capture::ReadProgress& p) {
        const auto now = Clock::now();
        if (reported && p.stage != stage) stage_start = last;
        stage = p.stage;
        reported = true;
        last = now;
        board.update(id, input.path, p, stage_start);
    };
    try {
        auto capture = capture::load_capture(input, limits, limit, progress, tables);
        board.finish(id);
        return capture;
    } catch (...) {
        board.finish(id);
        throw;
    }
}

}  // namespace memsnap::cli
