#pragma once

namespace memsnap::cli {

// Settings of the memsnap process that the library leaves to its host.
void configure_process();

}  // namespace memsnap::cli
