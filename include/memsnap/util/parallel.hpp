#pragma once
// Work over many items on every core: each thread takes the next item when it is done with
// one, so a thread holds one item at a time (one capture per core, not the whole series).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace memsnap::util {

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
    const std::size_t threads = std::min<std::size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
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

}  // namespace memsnap::util
