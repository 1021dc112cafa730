#pragma once
// One capture's trace replayed: the timeline, the peak and its owners, iterations, what each
// iteration leaves live, out-of-memory events explained. Uses judge and sites.

#include <memsnap/analysis/trace/trace.hpp>
