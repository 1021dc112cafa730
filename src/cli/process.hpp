#pragma once

namespace memsnap::cli {

// Runs memsnap again, in this process, with glibc's malloc on transparent huge pages, when
// the system has them and the environment does not choose otherwise. Returns when memsnap
// should go on as it is: already relaunched, not possible, or the relaunch failed.
void relaunch_on_huge_pages(char** argv);

// Settings of the memsnap process that the library leaves to its host.
void configure_process();

}  // namespace memsnap::cli
