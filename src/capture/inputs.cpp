#include <memsnap/capture/inputs.hpp>
#include <memsnap/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace memsnap::capture {

std::vector<InputName> expand_inputs(const std::vector<std::string>& names) {
    std::vector<InputName> out;
    for (const auto& name : names) {
        std::error_code ec;
        if (name == "-" || !std::filesystem::is_directory(name, ec)) {
            out.push_back({name, false});
            continue;
        }
        // Subdirectories too (runs kept one per folder); hidden files and folders are left out,
        // and symbolic links to folders are not followed, so no loop can make it endless.
        std::vector<std::string> inside;
        std::filesystem::recursive_directory_iterator it(name, ec), end;
        for (; !ec && it != end; it.increment(ec)) {
            const auto base = it->path().filename().string();
            if (base.empty() || base.front() == '.') {
                if (it->is_directory(ec)) it.disable_recursion_pending();
                continue;
            }
            if (it->is_regular_file(ec)) inside.push_back(it->path().string());
        }
        if (ec) throw input_error(fmt::format("cannot list the directory: {}", ec.message()), name);
        std::sort(inside.begin(), inside.end());
        for (auto& path : inside) out.push_back({std::move(path), true});
    }
    if (out.empty()) throw usage_error("the directories named hold no files");
    return out;
}

}  // namespace memsnap::capture
