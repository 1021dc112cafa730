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
        std::vector<std::string> inside;
        for (const auto& entry : std::filesystem::directory_iterator(name, ec)) {
            const auto base = entry.path().filename().string();
            if (!base.empty() && base.front() != '.' && entry.is_regular_file(ec))
                inside.push_back(entry.path().string());
        }
        if (ec) throw input_error(fmt::format("cannot list the directory: {}", ec.message()), name);
        std::sort(inside.begin(), inside.end());
        for (auto& path : inside) out.push_back({std::move(path), true});
    }
    if (out.empty()) throw usage_error("the directories named hold no files");
    return out;
}

}  // namespace memsnap::capture
