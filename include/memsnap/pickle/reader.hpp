#pragma once
// A data-only pickle machine for protocols 2 to 5. It never imports, calls or builds
// objects: every opcode that would load code is refused with the byte offset.

#include <memsnap/pickle/document.hpp>
#include <memsnap/pickle/limits.hpp>

#include <cstdint>
#include <functional>
#include <string_view>

namespace memsnap::pickle {

// What the byte stream says about its writer; used to name the writer in reports.
struct StreamInfo {
    int protocol = 0;
    std::uint64_t frame_ops = 0;
    std::uint64_t memoize_ops = 0;       // MEMOIZE (protocol 4+, Python)
    std::uint64_t put_ops = 0;           // BINPUT / LONG_BINPUT
    std::uint64_t memo_before_fill = 0;  // list/dict memoized while empty (Python; or empty)
    std::uint64_t memo_after_fill = 0;   // list/dict memoized once filled (torch C++)
    std::uint64_t long1_ops = 0;
    std::uint64_t long1_not_8_bytes = 0;  // the C++ writer always writes 8 bytes
    std::uint64_t stop_offset = 0;        // byte offset of STOP
    std::uint64_t trailing_bytes = 0;     // bytes after STOP (HTML plots pad with NULs)

    // "torch C++ pickler" or "Python pickle", from the memo and integer habits.
    std::string_view writer() const;
};

// True when `text` is UTF-8 as Python's surrogatepass writes it: no overlong forms, nothing
// past U+10FFFF; lone surrogates pass (pickle writes them so). Strings of the JSON reader are
// held to the same rule.
bool valid_utf8(std::string_view text) noexcept;

// True when `bytes` starts like a binary pickle (PROTO opcode).
bool looks_like_pickle(std::string_view bytes) noexcept;
// True when `bytes` starts like a pickle of protocol 0 or 1 (text opcodes: "(dp0", "}q\0(",
// "ccopy_reg"), which torch never writes and memsnap does not read.
bool looks_like_old_pickle(std::string_view bytes) noexcept;

// How often a reader tells its caller how far it got, in bytes: the pages behind it may then
// be released (and progress shown). The JSON snapshot reader keeps the same pace.
inline constexpr std::uint64_t consumed_every = std::uint64_t{1} << 20;

// Input that arrives in pieces (a compressed file decompressed as it is read). more(end)
// makes the input at least `end` bytes long when it has that many, and returns all of it so
// far: the same bytes at the same address, longer. Shorter than `end`: the input ends there.
struct GrowingInput {
    std::function<std::string_view(std::uint64_t end)> more;
    // The reader keeps this many bytes ahead of it when it can, so that its one-piece reads
    // of lists and trace entries rarely meet the end of what has arrived (correct if they do).
    std::uint64_t lookahead = std::uint64_t{1} << 20;
    // A guess at the whole size, for reserving room (0: none).
    std::uint64_t expected_size = 0;
};

// Decodes doc.input() into doc.root, applying `hook` to containers as they are sealed.
// Throws memsnap::Error (input) with the byte offset of the offending opcode.
// `consumed`, when given, is called every `consumed_every` bytes with the offset reached.
// `growing`, when given, is asked for more input whenever doc.input() runs out; the document's
// input grows with it.
StreamInfo decode(Document& doc, const Limits& limits, SealHook* hook,
                  const std::function<void(std::uint64_t)>& consumed = {}, const GrowingInput* growing = nullptr);

}  // namespace memsnap::pickle
