// Hostile inputs, generated here (nothing large is committed), run through the memsnap binary
// as a stranger's file would be. For each: the exit code must be 0 or 2 (or what the case
// expects), no signal may end the process, and it must stay within the robustness targets
// for an input of N MB: at most 1 s + 20 ms x N of time and 100 MB + 2 x N MB of peak
// memory. The time measured against the budget is the process's CPU time (user + system,
// from rusage), with slack, so that other work on the machine (ctest -j, a busy CI host)
// does not make a case fail; a run over it is measured twice more and the least counts; a
// wall-clock limit of ten times the budget catches a hang.
// Cases that print input-derived text also check that no control character reaches the
// output raw. Prints one row per case; exits 1 when any case fails. --no-budgets keeps
// every check but time and memory, for sanitizer builds (whose shadow memory and checks are
// not memsnap's cost), and leaves out the format variants of a large input (Case::format_variant).
//
//   memsnap_hostile MEMSNAP_BINARY [WORK_DIR] [--only NAME] [--no-budgets]

#include "hostile.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace memsnap::hostile;

namespace {

// CPU time may pass the time budget by this factor: the budget is a wall-clock target for an
// idle machine, and CPU time also counts a diff's second reading thread and the kernel's
// work for the process, which grows a little when other processes compete for the caches.
constexpr double cpu_slack = 1.5;
// Runs over the time budget are measured again this many times; the least CPU time counts.
constexpr int cpu_retries = 2;
// The wall-clock limit, in time budgets: past it the process is killed as hung.
constexpr double wall_limit_budgets = 10;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A field of /proc/<pid>/status in MB ("VmHWM", "VmRSS"), 0 when it cannot be read.
double status_mb(const std::string& status_file, std::string_view field) {
    std::ifstream proc(status_file);
    for (std::string line; std::getline(proc, line);)
        if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':')
            return std::stod(line.substr(field.size() + 1)) / 1024.0;
    return 0;
}

// Runs `argv` with its output in files; kills it after `limit` seconds of wall-clock time.
Run run(const std::vector<std::string>& argv, const fs::path& work, double limit) {
    const auto out_path = work / "stdout.txt", err_path = work / "stderr.txt";
    // Before its exec the child is a copy of this harness, at most this large.
    const double harness_mb = status_mb("/proc/self/status", "VmRSS");
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int null = open("/dev/null", O_RDONLY);
        dup2(out, 1);
        dup2(err, 2);
        dup2(null, 0);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    Run r;
    int status = 0;
    rusage usage{};
    // The peak resident memory of the new program image: VmHWM, sampled while it runs, and
    // rusage's maxrss when that is above what the child held before its exec (a program that
    // ends between two samples is still measured).
    const auto status_file = fmt::format("/proc/{}/status", pid);
    const auto exe_link = fs::path(fmt::format("/proc/{}/exe", pid));
    while (true) {
        const pid_t done = wait4(pid, &status, WNOHANG, &usage);
        if (done == pid) break;
        // Until the exec, the child is a copy of this harness: its memory is not memsnap's.
        std::error_code ec;
        if (fs::read_symlink(exe_link, ec) == fs::path(argv.front()))
            r.peak_mb = std::max(r.peak_mb, status_mb(status_file, "VmHWM"));
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed > limit) {
            kill(pid, SIGKILL);
            wait4(pid, &status, 0, &usage);
            r.timed_out = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto seconds_of = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    r.cpu_seconds = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
    if (const double maxrss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0; maxrss_mb > harness_mb) {
        r.peak_mb = std::max(r.peak_mb, maxrss_mb);
    } else if (r.peak_mb == 0) {
        r.peak_mb = harness_mb;  // ended before a sample: at most what the harness held
        r.peak_is_bound = true;
    }
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    return r;
}

std::vector<Case> cases() {
    std::vector<Case> c;
    c.push_back({"regex-long-filename", "frame file name /lib/python + 30000 digits + .py (regex stack depth)",
                 [](const fs::path& d) {
                     Spec s;
                     s.segments = {{4096}};
                     s.frames = {{"/lib/python" + std::string(30000, '7') + ".py", "f", 1}};
                     write(d / "a.pickle", snapshot(s));
                     return std::vector<std::string>{"info", (d / "a.pickle").string()};
                 }});
    c.push_back(
        {"regex-long-function", "a leaking site under a 30000-letter function x_log_aaa... (diagnosis)",
         [](const fs::path& d) {
             Spec s;
             s.frames = {{"/home/u/train.py", "x_log_" + std::string(30000, 'a'), 1}};
             s.segments = {{4096}};
             write(d / "step1.pickle", snapshot(s));
             s.segments = {{4096, 64 << 20}};
             write(d / "step2.pickle", snapshot(s));
             return std::vector<std::string>{"diff", (d / "step1.pickle").string(), (d / "step2.pickle").string()};
         }});
    c.push_back({"focus-100k-frame", "--focus 'a+b' against a 100 KB frame name", [](const fs::path& d) {
                     Spec s;
                     s.segments = {{4096}};
                     s.frames = {{"/home/u/" + std::string(100000, 'a') + ".py", "f", 1}};
                     write(d / "a.pickle", snapshot(s));
                     return std::vector<std::string>{"diff", "--focus", "a+b", (d / "a.pickle").string(),
                                                     (d / "a.pickle").string()};
                 }});
    c.push_back({"hide-backtracking", "--hide '(a+)+$' against 28 a's and a '!'", [](const fs::path& d) {
                     Spec s;
                     s.segments = {{4096}};
                     s.frames = {{"/home/u/" + std::string(28, 'a') + "!.py", "f", 1}};
                     write(d / "a.pickle", snapshot(s));
                     return std::vector<std::string>{"diff", "--hide", "(a+)+$", (d / "a.pickle").string(),
                                                     (d / "a.pickle").string()};
                 }});
    return c;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: memsnap_hostile MEMSNAP_BINARY [WORK_DIR] [--only NAME] [--no-budgets]\n");
        return 2;
    }
    const std::string binary = fs::absolute(argv[1]).string();
    fs::path work = argc > 2 && !std::string_view(argv[2]).starts_with("--")
                        ? fs::path(argv[2])
                        : fs::temp_directory_path() / "memsnap-hostile";
    std::string only;
    bool budgets = true;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--only" && i + 1 < argc) only = argv[i + 1];
        if (std::string(argv[i]) == "--no-budgets") budgets = false;
    }
    fs::create_directories(work);
    auto all = cases();
    for (auto& m : more_cases()) all.push_back(std::move(m));
    for (auto& m : amplification_cases()) all.push_back(std::move(m));
    int failures = 0, variants_left_out = 0;
    fmt::print("{:<28} {:>9} {:>5} {:>8} {:>8} {:>8} {:>9} {:>9}  {}\n", "case", "input MB", "exit", "wall s", "CPU s",
               "budget", "peak MB", "budget", "result");
    for (const auto& k : all) {
        if (!only.empty() && k.name != only) continue;
        if (!budgets && k.format_variant && only.empty()) {
            ++variants_left_out;
            continue;
        }
        const auto dir = work / k.name;
        fs::remove_all(dir);
        fs::create_directories(dir);
        auto args = k.make(dir);
        double input_mb = 0;
        for (const auto& a : args)
            if (fs::is_regular_file(a)) input_mb += static_cast<double>(fs::file_size(a)) / (1 << 20);
        const double time_budget = 1.0 + 0.020 * input_mb;
        const double memory_budget = 100.0 + 2.0 * input_mb;
        args.insert(args.begin(), binary);
        const double wall_limit = budgets ? wall_limit_budgets * time_budget : std::max(300.0, 50 * time_budget);
        auto r = run(args, dir, wall_limit);
        // CPU time too moves with the machine's load (shared caches, a hypervisor's steal): a run
        // over the budget is measured again, and the least of three counts. A case that is
        // really too slow stays over it.
        for (int again = 0;
             again < cpu_retries && budgets && !r.timed_out && r.signal == 0 && r.cpu_seconds > cpu_slack * time_budget;
             ++again) {
            const auto next = run(args, dir, wall_limit);
            if (next.cpu_seconds < r.cpu_seconds) r = next;
        }
        std::string why;
        if (r.timed_out)
            why = fmt::format("no end after {:.0f} s of wall-clock time: killed (a hang?)", wall_limit);
        else if (r.signal != 0)
            why = fmt::format("killed by signal {}", r.signal);
        else if (!k.exits.count(r.exit_code))
            why = fmt::format("exit {}: {}", r.exit_code, r.err.substr(0, 200));
        else if (budgets && r.cpu_seconds > cpu_slack * time_budget)
            why = fmt::format("over the time budget: {:.2f} s of CPU time", r.cpu_seconds);
        else if (budgets && r.peak_mb > memory_budget)
            why = "over the memory budget";
        else if (r.exit_code == 2 && (r.err.empty() || r.err.find('\n') != r.err.size() - 1))
            why = "not one error line";
        if (why.empty() && k.clean_output)
            for (const auto* text : {&r.out, &r.err})
                for (const char ch : *text)
                    if ((static_cast<unsigned char>(ch) < 0x20 && ch != '\n') || ch == 0x7f) {
                        why = fmt::format("a raw control character 0x{:02x} reached the output", ch);
                        break;
                    }
        if (why.empty() && k.extra) why = k.extra(r);
        fmt::print("{:<28} {:>9.2f} {:>5} {:>8.2f} {:>8.2f} {:>8.2f} {:>9} {:>9.1f}  {}\n", k.name, input_mb,
                   r.signal ? "sig" : std::to_string(r.exit_code), r.seconds, r.cpu_seconds, time_budget,
                   fmt::format("{}{:.1f}", r.peak_is_bound ? "<=" : "", r.peak_mb), memory_budget,
                   why.empty() ? "ok" : "FAIL: " + why);
        if (!why.empty()) ++failures;
        if (why.empty() && std::getenv("MEMSNAP_HOSTILE_KEEP") == nullptr)
            fs::remove_all(dir);
        else
            fmt::print("    kept {} to look at; {}\n", dir.string(), r.err.substr(0, 300));
    }
    if (variants_left_out)
        fmt::print(
            "{} case(s) left out: the same large input as the case before in another format, which "
            "--no-budgets leaves out\n",
            variants_left_out);
    fmt::print("{} case(s) failed\n", failures);
    return failures == 0 ? 0 : 1;
}
