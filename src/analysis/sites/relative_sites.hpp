#pragma once
// Sites of captures from different processes (another rank, checkout or machine) compared by
// their path below each capture's own project root, so that /home/a/proj/model.py and
// /home/b/proj_2/model.py are one site.

#include <memsnap/analysis/sites/snapshot_info.hpp>

#include <string>
#include <tuple>
#include <vector>

namespace memsnap::analysis::detail {

// The deepest directory common to the user-code sites ("" when there are none).
std::string project_root_of(const std::vector<SiteUsage>& sites);

using RelativeSite = std::tuple<std::string, std::int64_t, std::string, Category>;  // path, line, name, category
RelativeSite relative_site(const SiteUsage& site, const std::string& root);

}  // namespace memsnap::analysis::detail
