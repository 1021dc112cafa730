#pragma once
// Work over many items on every core: each thread takes the next item when it is done with
// one, so a thread holds one item at a time (one capture per core, not the whole series).

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace memsnap::util {

// The threads for_each_index runs on, at most.
inline std::size_t thread_count() { return std::max(1u, std::thread::hardware_concurrency()); }

// Calls work(i) for every i in [0, count), on up to one thread per core (this one included).
// An exception thrown by work(i) is kept in the i-th slot of the result, not rethrown.
template <class Work>
std::vector<std::exception_ptr> for_each_index(std::size_t count, Work&& work) {
    std::vector<std::exception_ptr> errors(count);
    std::atomic<std::size_t> next{0};
    const auto worker = [&] {
        for (std::size_t i = next++; i < count; i = next++) {
            try {
                work(i);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    const std::size_t threads = std::min(count, thread_count());
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) {
        try {
            pool.emplace_back(worker);
        } catch (const std::system_error&) {
            break;  // no more threads: the others share the work
        }
    }
    worker();
    for (auto& t : pool) t.join();
    return errors;
}

// for_each_index, and done(i) for every i in index order, under a lock, as soon as work(i)
// and every work before it have ended (thrown or not). With a `window`, item i starts only
// once i < (the first item not yet done) + window, so that whatever work(i) leaves for
// done(i) is held for at most `window` items at once, however slow one item is (0: no bound).
template <class Work, class Done>
std::vector<std::exception_ptr> for_each_index_in_order(std::size_t count, std::size_t window, Work&& work,
                                                        Done&& done) {
    std::vector<bool> ended(count, false);
    std::size_t next_done = 0;
    std::mutex lock;
    std::condition_variable moved;
    // No deadlock: items are taken in index order, so the item at next_done has started, and
    // it never waits (it lies inside the window).
    return for_each_index(count, [&](std::size_t i) {
        if (window > 0) {
            std::unique_lock wait(lock);
            moved.wait(wait, [&] { return i < next_done + window; });
        }
        std::exception_ptr error;
        try {
            work(i);
        } catch (...) {
            error = std::current_exception();
        }
        try {
            const std::lock_guard held(lock);
            ended[i] = true;
            // next_done moves first: a done() that throws cannot stall the others.
            while (next_done < count && ended[next_done]) done(next_done++);
        } catch (...) {
            if (!error) error = std::current_exception();
        }
        moved.notify_all();
        if (error) std::rethrow_exception(error);
    });
}

}  // namespace memsnap::util
