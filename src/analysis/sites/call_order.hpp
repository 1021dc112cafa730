#pragma once
// Internal: the frames of a `stacks="all"` stack in true call order.
//
// PyTorch's combined traceback (torch/csrc/profiler/combined_traceback.cpp) walks the C++
// frames innermost first and splices the next Python frame in before each C++ frame whose name
// holds "PyEval_EvalFrame"; the Python frames it has not placed by then go after the whole
// C++ stack, past `_start`. Since Python 3.11 one evaluator frame runs several Python frames,
// so the outer Python frames (`<module>`, `main`, an optimizer's `wrapper`) are nearly always
// left over and drawn as if `__libc_start_main` called them. They ran inside the outermost
// evaluator: they go back just before it, after the last Python frame placed, so that every
// stack reads `_start` → … → evaluator → Python frames → … → the allocation.

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

namespace memsnap::analysis::detail {

// Whether a C++ frame runs Python frames: PyTorch's own test, on the function name.
inline bool evaluates_python(std::string_view function) {
    return function.find("PyEval_EvalFrame") != std::string_view::npos;
}

// Puts `frames` (innermost first) in call order: Python frames after the outermost evaluator
// move to just before it; the C++ frames after it keep their order. A stack without an
// evaluator (Python only, C++ only, or not symbolised) is left as it is.
template <class Frame, class IsPython, class Evaluates>
void into_call_order(std::vector<Frame>& frames, IsPython is_python, Evaluates evaluates) {
    const auto last = std::find_if(frames.rbegin(), frames.rend(), evaluates);
    if (last == frames.rend()) return;
    const auto evaluator = std::prev(last.base());
    const auto python_end = std::stable_partition(std::next(evaluator), frames.end(), is_python);
    std::rotate(evaluator, std::next(evaluator), python_end);
}

}  // namespace memsnap::analysis::detail
