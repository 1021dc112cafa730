#include <memsnap/capture/capture.hpp>
#include <memsnap/io/mapped_file.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/stats/text_reader.hpp>

namespace memsnap::capture {

Capture load_capture(const std::string& path, const pickle::Limits& limits) {
    const io::MappedFile file(path);
    if (snapshot::looks_like_snapshot(file.bytes())) {
        snapshot::LoadOptions load;
        load.limits = limits;
        return {path, snapshot::load_snapshot(file, load)};
    }
    return {path, stats::read_stats_text(file.bytes(), path)};
}

}  // namespace memsnap::capture
