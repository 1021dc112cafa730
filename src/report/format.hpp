#pragma once
// Internal: what the writers share besides values: colour, and frame and site labels. Byte,
// rate and range formats are util/format.hpp's.

#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace memsnap::report {

// ANSI colour for terminals; plain text otherwise.
struct Style {
    bool color = false;
    std::string paint(std::string_view code, std::string_view text) const;
    std::string bold(std::string_view text) const;
    // A verdict in capitals, red for leaks, yellow for growth that is not, green otherwise.
    std::string verdict(std::string_view name) const;
};

// "file:line name", or "file name" when the line is 0; safe to print.
std::string frame_label(const analysis::FrameText& frame);
// The site's label, safe to print.
std::string site_label(const analysis::SiteKey& site);

}  // namespace memsnap::report
