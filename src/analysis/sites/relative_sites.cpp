#include "relative_sites.hpp"

#include <optional>

namespace memsnap::analysis::detail {

std::string project_root_of(const std::vector<SiteUsage>& sites) {
    std::optional<std::string> root;
    for (const auto& s : sites) {
        if (!s.site.user_code || s.site.filename.empty()) continue;
        const auto slash = s.site.filename.find_last_of("/\\");
        const std::string dir = slash == std::string::npos ? "" : s.site.filename.substr(0, slash + 1);
        if (!root) {
            root = dir;
            continue;
        }
        std::size_t k = 0;
        while (k < root->size() && k < dir.size() && (*root)[k] == dir[k]) ++k;
        root->resize(k);
    }
    if (!root) return "";
    const auto slash = root->find_last_of("/\\");
    return slash == std::string::npos ? "" : root->substr(0, slash + 1);
}

RelativeSite relative_site(const SiteUsage& u, const std::string& root) {
    const bool below = !root.empty() && u.site.filename.starts_with(root);
    return {below ? u.site.filename.substr(root.size()) : u.site.filename, u.site.line, u.site.name, u.category};
}

}  // namespace memsnap::analysis::detail
