#pragma once
// Every cap on what memsnap keeps or writes, in one table, with why it exists. None is
// reached by a real capture: each bounds what a small crafted file could make memsnap hold
// or write (memo sharing lets 1 MB describe gigabytes). The reader's own limits, which the
// command line can raise, are pickle::Limits. The man page's LIMITS section lists this table
// (a test keeps the two equal).

#include <array>
#include <cstdint>
#include <string_view>

namespace memsnap::limits {

inline constexpr std::uint64_t stack_frames = 128;             // innermost frames of a stack kept
inline constexpr std::uint64_t frame_text_bytes = 4096;        // of a name; longer ones cut in the middle
inline constexpr std::uint64_t machine_sites = 1000;           // sites JSON and CSV list unless --top
inline constexpr std::uint64_t folded_bytes = 16ull << 20;     // of folded stacks; the rest summed on one line
inline constexpr std::uint64_t picture_tree_nodes = 200000;    // of a flame graph's calling-context tree
inline constexpr std::uint64_t picture_boxes = 20000;          // drawn in a flame graph; the rest as "other"
inline constexpr std::uint64_t picture_bytes = 24ull << 20;    // of a flame graph's boxes
inline constexpr std::uint64_t picture_title_bytes = 400;      // of a name in a box's hover title
inline constexpr std::uint64_t html_page_bytes = 30ull << 20;  // an HTML page stops listing rows here
inline constexpr std::uint64_t series_points = 1000;           // points of a long series listed
inline constexpr std::uint64_t trace_sites = 1000;             // sites trace lists, with --top 0 too
inline constexpr std::uint64_t trend_sites = 1000;             // sites trend lists, with --top 0 too
inline constexpr std::uint64_t ooms_explained = 20;            // OOM events explained; the rest counted
inline constexpr std::uint64_t iterations_listed = 1000;       // a site's last iterations listed
inline constexpr std::uint64_t timeline_points = 1000;         // points of a trace's timeline
// The interactive view (--format html) aggregates on purpose, so that the page of any capture
// stays small and opens at once: these caps are reached by large real captures.
inline constexpr std::uint64_t view_bands = 3000;            // allocations drawn as bands of their own
inline constexpr std::uint64_t view_merged_sites = 500;      // sites whose small allocations merge into a band
inline constexpr std::uint64_t view_grid = 1000;             // points where merged bands are sampled
inline constexpr std::uint64_t view_samples = 100;           // evenly spaced moments, besides the marked ones
inline constexpr std::uint64_t view_marked_moments = 100;    // OOM and snapshot events made moments
inline constexpr std::uint64_t view_moment_sites = 200;      // sites listed at a moment; the rest summed
inline constexpr std::uint64_t view_moment_stacks = 300;     // stacks of a moment's flame graph; the rest summed
inline constexpr std::uint64_t view_moment_blocks = 600;     // blocks of a moment's allocator state drawn
inline constexpr std::uint64_t view_stack_frames = 48;       // innermost frames of a stack in the view
inline constexpr std::uint64_t view_frame_bytes = 2 << 20;   // of the view's frame names; more share one
inline constexpr std::uint64_t text_warnings = 100;          // warnings a text file keeps
inline constexpr std::uint64_t settings_keys = 1000;         // allocator_settings keys kept
inline constexpr std::uint64_t settings_bytes = 1ull << 20;  // allocator_settings rendered
inline constexpr std::uint64_t settings_values = 20000;      // allocator_settings values rendered
inline constexpr std::uint64_t summary_devices = 1024;       // devices one summary file may name
inline constexpr std::uint64_t device_id = 65535;            // highest device ID
inline constexpr std::uint64_t trace_streams = 4096;         // distinct streams of a trace
inline constexpr std::uint64_t stats_dict_depth = 64;        // nesting of a memory_stats dict
inline constexpr std::uint64_t stats_key_bytes = 256;        // of a flattened memory_stats key

struct Cap {
    std::string_view name;
    std::uint64_t value;
    std::string_view unit;  // "bytes" or what is counted
    std::string_view why;
};

inline constexpr std::array<Cap, 34> caps = {{
    {"stack_frames", stack_frames, "frames",
     "a stack keeps its innermost frames (frames_omitted counts the rest): deeper stacks are recursion"},
    {"frame_text_bytes", frame_text_bytes, "bytes", "a longer file or function name is cut in the middle"},
    {"machine_sites", machine_sites, "sites", "JSON and CSV list this many sites unless --top says otherwise"},
    {"folded_bytes", folded_bytes, "bytes", "folded output; the stacks left are summed on one line"},
    {"picture_tree_nodes", picture_tree_nodes, "nodes", "a flame graph's tree stops growing here"},
    {"picture_boxes", picture_boxes, "boxes", "a flame graph draws the biggest; the rest merge into 'other' boxes"},
    {"picture_bytes", picture_bytes, "bytes", "a flame graph's boxes; the rest merge into 'other' boxes"},
    {"picture_title_bytes", picture_title_bytes, "bytes", "of a name in a box's hover title"},
    {"html_page_bytes", html_page_bytes, "bytes", "an HTML page stops listing rows and says how many are left"},
    {"series_points", series_points, "points", "a long series is listed at evenly spaced points; all are judged"},
    {"trace_sites", trace_sites, "sites", "trace lists at most this many sites"},
    {"trend_sites", trend_sites, "sites", "trend lists at most this many sites"},
    {"ooms_explained", ooms_explained, "events", "trace explains the first OOM events and counts the rest"},
    {"iterations_listed", iterations_listed, "iterations", "a site lists its last iterations; verdicts weigh all"},
    {"timeline_points", timeline_points, "points", "a trace's timeline keeps the peak, marks and evenly spaced points"},
    {"view_bands", view_bands, "bands",
     "the view draws the biggest allocations as bands; smaller ones merge into one band per site"},
    {"view_merged_sites", view_merged_sites, "sites", "the view's merged bands; smaller sites share one band"},
    {"view_grid", view_grid, "points", "the view samples merged bands here, the peak, OOMs and snapshots included"},
    {"view_samples", view_samples, "moments", "evenly spaced moments the view can select, besides the marked ones"},
    {"view_marked_moments", view_marked_moments, "events", "the first OOM and snapshot events the view can select"},
    {"view_moment_sites", view_moment_sites, "sites", "a view moment lists its biggest sites; one row sums the rest"},
    {"view_moment_stacks", view_moment_stacks, "stacks", "a view moment's flame graph; one box sums the rest"},
    {"view_moment_blocks", view_moment_blocks, "blocks",
     "a marked view moment's allocator state (a sample's: a quarter), biggest segments first"},
    {"view_stack_frames", view_stack_frames, "frames",
     "a stack in the view keeps its innermost frames, says how many are left"},
    {"view_frame_bytes", view_frame_bytes, "bytes", "the view's frame names; frames met after share one placeholder"},
    {"text_warnings", text_warnings, "warnings", "a text file keeps its first warnings and counts the rest"},
    {"settings_keys", settings_keys, "keys", "allocator_settings keys kept; torch writes a few dozen"},
    {"settings_bytes", settings_bytes, "bytes", "allocator_settings rendered as text"},
    {"settings_values", settings_values, "values", "allocator_settings values rendered"},
    {"summary_devices", summary_devices, "devices", "a summary file naming more is not a capture of one machine"},
    {"device_id", device_id, "", "a higher device ID in a summary is refused"},
    {"trace_streams", trace_streams, "streams", "more distinct streams read as stream 0"},
    {"stats_dict_depth", stats_dict_depth, "levels", "a deeper memory_stats dict is not read as one"},
    {"stats_key_bytes", stats_key_bytes, "bytes", "a longer flattened key is not a memory_stats key"},
}};

}  // namespace memsnap::limits
