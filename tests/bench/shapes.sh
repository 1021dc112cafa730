#!/usr/bin/env bash
# Benchmark over every real shape: each capture in ../shared/real whose trace holds at least
# 1,000 events, frees among them (chosen from expected.json's trace_events_by_action, not by
# name), scaled to SIZE_MIB with scale_real_snapshot.py. For each: file size, `memsnap info`
# time and MB/s, peak RSS / file, the speed-up over Python's pickle.load of the same file in
# the same run, and `memsnap diff` of two copies / info. Beside that last, two `memsnap info`
# processes at once, one per copy, / info: what reading two files side by side costs on this
# machine (cores sharing caches, memory and the kernel's page zeroing), the floor under a diff,
# which reads its two files on two threads. Then each target against the worst shape, which is
# what the README's table shows.
#
# Usage: tests/bench/shapes.sh [MEMSNAP_BINARY [SIZE_MIB]]     default build/memsnap 400
# Environment: MEMSNAP_BENCH_DIR (cache, default /tmp/memsnap-bench), MEMSNAP_BENCH_RUNS (best
#   of N for memsnap, info, diff and two infos at once taking turns; default 3),
#   MEMSNAP_BENCH_PYTHON_RUNS (best of N for pickle.load, after memsnap's runs; default 1: one
#   run of Python favours memsnap, whose best of N it is set against, when the machine has a
#   slow spell), MEMSNAP_REAL_DIR (default ../shared/real beside the repo),
#   MEMSNAP_BENCH_EXTRA (more snapshot files, space-separated: captures that are not in
#   ../shared/real, measured the same way), MEMSNAP_BENCH_ONLY (a substring: only shapes whose
#   file name holds it), MEMSNAP_BENCH_SCALING (`consistent`, the default: each copy of the
#   trace makes what it frees and frees what it makes, so that the trace matches its snapshot as
#   torch's do; or `repeat`: the trace repeated as it is, which leaves each copy's allocations
#   live to the end and frees blocks never made; see scale_real_snapshot.py).
# Exit status: 0 when every measurement was taken (targets are reported, not enforced), 1 when
# memsnap or the reference fails on a file, 2 on setup errors.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-build/memsnap}"
mib="${2:-400}"
cache="${MEMSNAP_BENCH_DIR:-/tmp/memsnap-bench}"
real="${MEMSNAP_REAL_DIR:-$repo/../shared/real}"
runs="${MEMSNAP_BENCH_RUNS:-3}"
pyruns="${MEMSNAP_BENCH_PYTHON_RUNS:-1}"
python="${PYTHON:-python3}"

source "$here/lib.sh"
[[ -x "$bin" ]] || die "memsnap binary '$bin' not found (build it first)"
[[ "$mib" =~ ^[0-9]+$ && "$mib" -gt 0 ]] || die "size must be a positive number of MiB, got '$mib'"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "MEMSNAP_BENCH_RUNS must be a positive number, got '$runs'"
[[ "$pyruns" =~ ^[1-9][0-9]*$ ]] || die "MEMSNAP_BENCH_PYTHON_RUNS must be a positive number, got '$pyruns'"
scaling="${MEMSNAP_BENCH_SCALING:-consistent}"
case "$scaling" in
    repeat) scaling_flag="" scaled_suffix="" ;;
    consistent) scaling_flag="--consistent" scaled_suffix="consistent" ;;
    *) die "MEMSNAP_BENCH_SCALING must be consistent or repeat, got '$scaling'" ;;
esac
[[ -r "$real/snapshots/expected.json" ]] || die "no real captures at $real (../shared/real is needed)"
require_time
mkdir -p "$cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The shapes: by what the trace holds, from the figures computed with a refusing unpickler.
mapfile -t sources < <("$python" - "$real/snapshots" <<'EOF'
import json, os, sys
folder = sys.argv[1]
for entry in json.load(open(os.path.join(folder, "expected.json"))):
    actions = entry.get("trace_events_by_action") or {}
    frees = actions.get("free_requested", 0) + actions.get("free_completed", 0)
    if sum(actions.values()) >= 1000 and frees > 0:
        print(os.path.join(folder, entry["file"]))
EOF
)
for extra in ${MEMSNAP_BENCH_EXTRA:-}; do sources+=("$extra"); done
if [[ -n "${MEMSNAP_BENCH_ONLY:-}" ]]; then
    kept=()
    for s in "${sources[@]}"; do [[ "$(basename "$s")" == *"$MEMSNAP_BENCH_ONLY"* ]] && kept+=("$s"); done
    sources=("${kept[@]}")
fi
[[ ${#sources[@]} -gt 0 ]] || die "no capture has a trace of 1,000 events with frees"

echo "memsnap on every real shape, each scaled to ${mib} MiB ($scaling)"
echo "  binary:  $bin"
echo "  machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "  memsnap: best of $runs runs, info, diff and two infos at once taking turns; pickle.load (refusing Unpickler): best of $pyruns, in the same run"
echo
printf "%-44s %7s %8s %7s %8s %8s %9s %9s\n" "shape (source)" "MB" "info s" "MB/s" "RSS/file" "x pickle" "diff/info" "pair/info"
rows=()
for src in "${sources[@]}"; do
    name="$(basename "$src" .pickle)"
    f="$(scaled_capture "$src" "$mib" "$scaled_suffix")"
    if [[ ! -s "$f" ]]; then
        echo "  generating $f" >&2
        "$python" "$here/scale_real_snapshot.py" --mib "$mib" ${scaling_flag} "$src" "$f" >&2
    fi
    [[ -s "$f.copy" ]] || cp "$f" "$f.copy"
    bytes=$(stat -c %s "$f")
    cat "$f" "$f.copy" >/dev/null  # page cache warm for every reader
    # info and diff take turns, so that a slow spell of the machine meets both alike and
    # diff / info compares runs of the same minutes.
    info="" diff="" pair=""
    for ((run = 1; run <= runs; run++)); do
        line=$(measure "$bin" info --format json "$f") || failed "memsnap info on $f"
        info=$(keep_best "$info" "$line")
        line=$(measure "$bin" diff --format json "$f" "$f.copy") || failed "memsnap diff on $f"
        diff=$(keep_best "$diff" "$line")
        line=$(measure bash -c '"$1" info --format json "$2" >/dev/null & other=$!
            "$1" info --format json "$3" >/dev/null || exit 1
            wait "$other"' pair "$bin" "$f" "$f.copy") || failed "two memsnap info at once on $f"
        pair=$(keep_best "$pair" "$line")
    done
    py=""
    for ((run = 1; run <= pyruns; run++)); do
        line=$(measure "$python" "$here/refusing_load.py" "$f") || failed "pickle.load of $f"
        py=$(keep_best "$py" "$line")
    done
    read -r info_s info_kb <<<"$info"
    read -r diff_s _ <<<"$diff"
    read -r pair_s _ <<<"$pair"
    read -r py_s _ <<<"$py"
    row=$(awk -v n="$name" -v b="$bytes" -v s="$info_s" -v kb="$info_kb" -v d="$diff_s" -v p="$py_s" -v q="$pair_s" \
        'BEGIN { printf "%s %.0f %.3f %.0f %.3f %.1f %.2f %.2f", n, b / 1e6, s, b / 1e6 / s, kb * 1024 / b, p / s, d / s, q / s }')
    rows+=("$row")
    awk '{ printf "%-44s %7s %8s %7s %8s %8s %9s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8 }' <<<"$row"
done

echo
echo "Targets, each against the worst shape:"
printf '%s\n' "${rows[@]}" | awk '
function verdict(ok) { return ok ? "MET" : "MISSED" }
NR == 1 { mbps = $4; wm = $1; rss = $5; wr = $1; speed = $6; ws = $1; diff = $7; wd = $1; pair = $8 }
{ if ($4 < mbps) { mbps = $4; wm = $1 } if ($5 > rss) { rss = $5; wr = $1 }
  if ($6 < speed) { speed = $6; ws = $1 } if ($7 > diff) { diff = $7; wd = $1; pair = $8 }
  met += ($4 >= 700 && $5 <= 0.2 && $6 >= 20 && $7 <= 1.1) }
END {
  printf "  speed       %6.0f MB/s    (target >= 700)       %-6s worst: %s\n", mbps, verdict(mbps >= 700), wm
  printf "  vs pickle   %6.1fx         (target >= 20x)       %-6s worst: %s\n", speed, verdict(speed >= 20), ws
  printf "  peak RSS    %6.3f x file  (target <= 0.2)       %-6s worst: %s\n", rss, verdict(rss <= 0.2), wr
  printf "  diff        %6.2f x info  (target <= 1.1)       %-6s worst: %s\n", diff, verdict(diff <= 1.1), wd
  printf "              (two infos at once on that shape: %.2f x info)\n", pair
  printf "  shapes meeting every target: %d of %d\n", met, NR
}'
