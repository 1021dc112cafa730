#pragma once
// Internal: the script a capture's Python process ran as __main__, from its stacks.

#include <memsnap/snapshot/model.hpp>

#include <optional>
#include <string>

namespace memsnap::analysis::detail {

// The file of the outermost `<module>` frame of the capture's stacks, when every stack that has
// one agrees: one Python process runs one main script, named as it was started (a relative
// path stays relative), so two captures that name different ones come from two processes.
// nullopt without stacks, without such a frame (a thread's stack, Python frames not recorded),
// or when the stacks disagree (frames cut short).
std::optional<std::string> main_script(const snapshot::Snapshot& snap);

}  // namespace memsnap::analysis::detail
