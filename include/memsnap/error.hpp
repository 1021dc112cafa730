#pragma once
// The one error hierarchy of memsnap. Library code throws these; the CLI catches them in
// one place and maps `kind` to the process exit code.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace memsnap {

// Exit codes are public interface (README, man page): keep the numbers stable.
enum class ErrorKind : int {
    usage = 1,  // bad command line or option value
    input = 2,  // a file that cannot be read or is not a supported capture
    gate = 3,   // a CI gate such as --fail-on-growth tripped
};

class Error : public std::runtime_error {
  public:
    Error(ErrorKind kind, std::string message, std::string file = {},
          std::optional<std::uint64_t> byte_offset = std::nullopt)
        : std::runtime_error(std::move(message)), kind_(kind), file_(std::move(file)), byte_offset_(byte_offset) {}

    ErrorKind kind() const noexcept { return kind_; }
    const std::string& file() const noexcept { return file_; }
    std::optional<std::uint64_t> byte_offset() const noexcept { return byte_offset_; }

    // Returns a copy that names `file` (used when a lower layer did not know the path).
    Error with_file(std::string file) const { return Error(kind_, what(), std::move(file), byte_offset_); }

    // "FILE: byte N: message" (parts omitted when unknown), one line.
    std::string describe() const;

  private:
    ErrorKind kind_;
    std::string file_;
    std::optional<std::uint64_t> byte_offset_;
};

// Thrown for malformed or unsupported input.
inline Error input_error(std::string message, std::string file = {},
                         std::optional<std::uint64_t> offset = std::nullopt) {
    return Error(ErrorKind::input, std::move(message), std::move(file), offset);
}

inline Error usage_error(std::string message) { return Error(ErrorKind::usage, std::move(message)); }

}  // namespace memsnap
