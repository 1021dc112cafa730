#!/usr/bin/env bash
# Benchmark of many files at once: `info --format jsonl`, `trend` and `ranks` over N copies of a
# real-shaped capture (scale_real_snapshot.py), on every core against the same command held to
# one core (taskset), in the same run. The target: 1.7x or more on 2 cores, with peak RSS at
# most cores x that of `info` on one file.
#
# Usage: tests/bench/many_files.sh [MEMSNAP_BINARY [FILES [SIZE_MIB]]]   default build/memsnap 6 80
# Environment: MEMSNAP_BENCH_DIR (cache, default /tmp/memsnap-bench), MEMSNAP_BENCH_RUNS (best
#   of N, default 3), MEMSNAP_BENCH_SOURCE (default ../shared/real/snapshots/nothanmin-a2_train_step.pickle).
# Exit status: 0 when the measurements were taken (the target is reported, not enforced), 1 when
# memsnap fails, 2 on setup errors (taskset is part of util-linux).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-build/memsnap}"
count="${2:-6}"
mib="${3:-80}"
cache="${MEMSNAP_BENCH_DIR:-/tmp/memsnap-bench}"
source_file="${MEMSNAP_BENCH_SOURCE:-$repo/../shared/real/snapshots/nothanmin-a2_train_step.pickle}"
runs="${MEMSNAP_BENCH_RUNS:-3}"
python="${PYTHON:-python3}"

source "$here/lib.sh"
[[ -x "$bin" ]] || die "memsnap binary '$bin' not found (build it first)"
[[ -r "$source_file" ]] || die "no real capture to scale at $source_file (../shared/real is needed)"
command -v taskset >/dev/null || die "taskset (util-linux) is needed to hold a run to one core"
[[ "$count" =~ ^[0-9]+$ && "$count" -ge 3 ]] || die "FILES must be 3 or more (trend needs 3), got '$count'"
require_time
cores=$(nproc)
mkdir -p "$cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

one="$(scaled_capture "$source_file" "$mib")"
[[ -s "$one" ]] || "$python" "$here/scale_real_snapshot.py" --mib "$mib" "$source_file" "$one" >&2
# Separate files (copies, not links), named as a run names them: by step and by rank.
dir="$cache/many-${count}x$(basename "$one" .pickle)"
mkdir -p "$dir/steps" "$dir/ranks"
steps=() ranks=()
for ((i = 0; i < count; i++)); do
    s="$dir/steps/snapshot_step$((100 * (i + 1))).pickle"
    r="$dir/ranks/snapshot_rank$i.pickle"
    [[ -s "$s" ]] || cp "$one" "$s"
    [[ -s "$r" ]] || cp "$one" "$r"
    steps+=("$s") ranks+=("$r")
done
cat "${steps[@]}" "${ranks[@]}" >/dev/null  # page cache warm

echo "memsnap over $count files of $(awk -v b="$(stat -c %s "$one")" 'BEGIN{printf "%.0f MB", b/1e6}') at once ($(basename "$source_file") scaled)"
echo "  binary:  $bin"
echo "  machine: $cores cores; best of $runs runs each"
single=$(best "$bin" info --format json "$one") || failed "memsnap info on $one"
read -r single_s single_kb <<<"$single"
echo "  one file: info ${single_s} s, peak $((single_kb / 1024)) MiB"
echo
printf "%-22s %12s %12s %8s %10s %14s\n" "command" "1 core s" "$cores cores s" "speed-up" "peak MiB" "RSS bound MiB"
rows=()
run_case() {
    local name=$1
    shift
    local all one_core all_s all_kb one_s
    all=$(best "$bin" "$@") || failed "memsnap $name"
    one_core=$(best taskset -c 0 "$bin" "$@") || failed "memsnap $name on one core"
    read -r all_s all_kb <<<"$all"
    read -r one_s _ <<<"$one_core"
    local row
    row=$(awk -v n="$name" -v a="$all_s" -v o="$one_s" -v kb="$all_kb" -v c="$cores" -v s="$single_kb" \
        'BEGIN { printf "%s %.3f %.3f %.2f %.0f %.0f", n, o, a, o / a, kb / 1024, c * s / 1024 }')
    rows+=("$row")
    awk '{ printf "%-22s %12s %12s %8s %10s %14s\n", $1, $2, $3, $4 "x", $5, $6 }' <<<"$row"
}
run_case "info-jsonl" info --format jsonl "${steps[@]}"
run_case "trend" trend --format json "${steps[@]}"
run_case "ranks" ranks --format json "${ranks[@]}"
echo
echo "Targets (speed-up >= 1.7x on 2 cores; peak RSS <= cores x one file's):"
printf '%s\n' "${rows[@]}" | awk -v c="$cores" '
{ printf "  %-12s %.2fx %s; peak %s MiB of %s %s\n", $1, $4, ($4 >= 1.7 || c < 2 ? "MET" : "MISSED"),
         $5, $6, ($5 <= $6 ? "MET" : "MISSED") }'
