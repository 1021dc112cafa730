#include <memsnap/capture/inputs.hpp>
#include <memsnap/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace memsnap::capture {

namespace {

namespace fs = std::filesystem;

// Why a directory entry is not read, or "" for a regular file (or a link to one).
std::string why_not_read(const fs::directory_entry& entry) {
    std::error_code ec;
    const auto target = entry.status(ec);  // follows links: git-annex and DVC keep captures behind them
    if (ec == std::errc::no_such_file_or_directory) return "a dangling symbolic link";
    if (ec == std::errc::too_many_symbolic_link_levels) return "a symbolic link loop";
    if (ec) return fmt::format("cannot read its type: {}", ec.message());
    switch (target.type()) {
        case fs::file_type::regular:
            return "";
        case fs::file_type::directory:
            return "a link to a folder, not followed";
        case fs::file_type::fifo:
            return "a FIFO, not a regular file";
        case fs::file_type::socket:
            return "a socket, not a regular file";
        case fs::file_type::block:
        case fs::file_type::character:
            return "a device, not a regular file";
        default:
            return "not a regular file";
    }
}

}  // namespace

std::vector<InputName> expand_inputs(const std::vector<std::string>& names) {
    std::vector<InputName> out;
    for (const auto& name : names) {
        std::error_code ec;
        if (name == "-" || !fs::is_directory(name, ec)) {
            out.push_back({name, false});
            continue;
        }
        // Subdirectories too (runs kept one per folder); hidden files and folders are left out,
        // and symbolic links to folders are not followed, so no loop can make it endless.
        // Each entry's own error (a dangling link) skips that entry; `ec` is the listing's.
        std::vector<InputName> inside;
        fs::recursive_directory_iterator it(name, ec), end;
        for (; !ec && it != end; it.increment(ec)) {
            const auto base = it->path().filename().string();
            if (base.empty() || base.front() == '.') {
                it.disable_recursion_pending();
                continue;
            }
            std::error_code own;
            if (it->is_directory(own) && !it->is_symlink(own)) continue;  // listed as the walk goes on
            inside.push_back({it->path().string(), true, why_not_read(*it)});
        }
        if (ec) throw input_error(fmt::format("cannot list the directory: {}", ec.message()), name);
        std::sort(inside.begin(), inside.end(), [](const InputName& a, const InputName& b) { return a.path < b.path; });
        std::move(inside.begin(), inside.end(), std::back_inserter(out));
    }
    if (out.empty()) throw usage_error("the directories named hold no files");
    return out;
}

}  // namespace memsnap::capture
