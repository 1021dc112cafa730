#pragma once
// How memsnap writes quantities for people: the one owner of byte, count, rate, range and
// device formats, used by the evidence sentences of the analysis and by every writer.

#include <memsnap/util/range.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memsnap::util {

// "1.50 GiB", "512 B", "-20.00 MiB": binary units, two decimals above bytes.
std::string human_bytes(std::int64_t bytes);
// Same with an explicit sign: "+20.00 MiB", "-512 B", "0 B".
std::string signed_bytes(std::int64_t bytes);
// "+3", "-2", "0".
std::string signed_count(std::int64_t count);
// A growth rate: "+2.00 MiB/step", or "/capture" when the steps are unknown.
std::string rate(double bytes_per_unit, bool per_step);
// A rate's value alone, for a column whose header names the unit: "+2.00 MiB".
std::string rate_value(double bytes_per_unit);
// "per step" / "per capture".
std::string_view per_unit(bool per_step);
// "device 0", "device unknown".
std::string device_name(std::optional<int> device);
// A share as a percentage with one decimal, never "-0.0".
std::string percent(double share);
// A count per step or capture in prose: whole from 100 up ("99999"), three significant
// digits below ("2.5", "0.025"), "<0.001" for less; never an exponent.
std::string count_rate(double count);

// A value range: "5114 MiB (5362417664–5363466239 B)" when the range is exactly one table unit
// wide, "512 B" when exact, otherwise "lo–hi (lo–hi B)". Counts use K/M (1000).
std::string format_range(ByteRange range, bool bytes);
// As format_range without the byte figures: "5114 MiB", "512 B", "1.00 KiB–2.00 KiB".
std::string format_range_compact(ByteRange range, bool bytes);
// A signed change range: "+8 B" when exact, "+7.00 MiB … +9.00 MiB" otherwise, "≈+2.00 GiB"
// when both ends print the same at two decimals.
std::string format_delta(ByteRange delta, bool bytes);

// Text from an input file made safe for one line of a terminal or a report, the one policy
// of every writer but JSON: control characters become "\x1b", "\n", "\t" escapes, invalid
// UTF-8 bytes (lone surrogates included) "\xNN", and C1 controls, bidi controls (U+061C,
// U+200E-200F, U+202A-202E, U+2066-2069) and U+FFFE/U+FFFF show as "<U+202E>". Each format
// escapes its own syntax on top.
std::string printable(std::string_view text);

}  // namespace memsnap::util
