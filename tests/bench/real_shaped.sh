#!/usr/bin/env bash
# Benchmark on real-shaped captures: a real snapshot from ../shared/real scaled up by
# repeating its trace (scale_real_snapshot.py), at several sizes. Measures, in one run and
# side by side: memsnap info, memsnap diff of two such files (parsed concurrently), and
# Python's pickle.load of the same file through a refusing Unpickler. Prints wall time, MB/s,
# peak RSS, the ratios, and the issue's targets (reported, not enforced).
#
# Usage: tests/bench/real_shaped.sh [MEMSNAP_BINARY [SIZES_MIB...]]
#   default build/memsnap, sizes 100 400
# Environment: MEMSNAP_BENCH_DIR (cache, default /tmp/memsnap-bench),
#              MEMSNAP_BENCH_SOURCE (default ../shared/real/snapshots/nothanmin-a2_train_step.pickle),
#              MEMSNAP_BENCH_RUNS (best of N for memsnap, default 3),
#              MEMSNAP_BENCH_PERF=1 (also `perf stat` and `perf record` of memsnap info on the largest file),
#              MEMSNAP_BENCH_HEAPTRACK=1 (also heaptrack's peak consumers of that run).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-build/memsnap}"
shift || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100 400)
cache="${MEMSNAP_BENCH_DIR:-/tmp/memsnap-bench}"
source_file="${MEMSNAP_BENCH_SOURCE:-$repo/../shared/real/snapshots/nothanmin-a2_train_step.pickle}"
runs="${MEMSNAP_BENCH_RUNS:-3}"
python="${PYTHON:-python3}"

source "$here/lib.sh"
[[ -x "$bin" ]] || die "memsnap binary '$bin' not found (build it first)"
[[ -r "$source_file" ]] || die "no real capture to scale at $source_file (../shared/real is needed)"
require_time
mkdir -p "$cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "memsnap on real-shaped captures"
echo "  source:  $source_file"
echo "  binary:  $bin"
echo "  machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo
echo "Shape of the source, the scaled file and the generated one (bytes and frames per event, memo sharing):"
files=()
for mib in "${sizes[@]}"; do
    f="$(scaled_capture "$source_file" "$mib")"
    [[ -s "$f" ]] || { echo "  generating $f" >&2; "$python" "$here/scale_real_snapshot.py" --mib "$mib" "$source_file" "$f"; }
    [[ -s "$f.copy" ]] || cp "$f" "$f.copy"
    files+=("$f")
done
# The generated benchmark file (make_big_snapshot.py) beside them: how far it is from a real one.
generated="$cache/generated-${sizes[0]}MiB-$(sha1sum "$here/make_big_snapshot.py" | cut -c1-10).pickle"
[[ -s "$generated" ]] || "$python" "$here/make_big_snapshot.py" --mib "${sizes[0]}" "$generated"
"$python" "$here/scale_real_snapshot.py" --figures "$source_file" "${files[0]}" "$generated" | sed 's/^/  /'
echo
printf "%-8s %-16s %9s %9s %10s %9s\n" "size" "reader" "wall s" "MB/s" "peak MiB" "RSS/file"
summary=()
for f in "${files[@]}"; do
    bytes=$(stat -c %s "$f")
    cat "$f" "$f.copy" >/dev/null  # page cache warm for every reader
    info=$(best "$bin" info --format json "$f") || failed "memsnap info on $f"
    diff=$(best "$bin" diff --format json "$f" "$f.copy") || failed "memsnap diff on $f"
    py=$(measure "$python" "$here/refusing_load.py" "$f") || failed "pickle.load of $f"
    read -r info_s info_kb <<<"$info"
    read -r diff_s diff_kb <<<"$diff"
    read -r py_s py_kb <<<"$py"
    for row in "memsnap info:$info_s:$info_kb" "memsnap diff:$diff_s:$diff_kb" "pickle.load:$py_s:$py_kb"; do
        IFS=: read -r name s kb <<<"$row"
        awk -v n="$name" -v s="$s" -v kb="$kb" -v b="$bytes" \
            'BEGIN{printf "%-8s %-16s %9.3f %9.0f %10.1f %9.3f\n", sprintf("%.0fMB", b/1e6), n, s, b/1e6/s, kb/1024, kb*1024/b}'
    done
    summary+=("$bytes $info_s $info_kb $diff_s $py_s")
done
echo
echo "Against the targets (issue: 400 MB real-shaped, 2 cores):"
printf '%s\n' "${summary[@]}" | awk '
{ mbps = $1 / 1e6 / $2; rate[NR] = mbps;
  printf "  %4.0f MB: info %.0f MB/s (target >= 500) %s; %.1fx pickle.load (target >= 20) %s; RSS %.2f x file (target <= 0.2) %s; diff %.2f x info (target <= 1.1) %s\n",
    $1 / 1e6, mbps, (mbps >= 500 ? "MET" : "MISSED"), $5 / $2, ($5 / $2 >= 20 ? "MET" : "MISSED"),
    $3 * 1024 / $1, ($3 * 1024 / $1 <= 0.2 ? "MET" : "MISSED"), $4 / $2, ($4 / $2 <= 1.1 ? "MET" : "MISSED") }
END { if (NR > 1) { lo = hi = rate[1]; for (i = 2; i <= NR; i++) { if (rate[i] < lo) lo = rate[i]; if (rate[i] > hi) hi = rate[i] }
      printf "  linear: MB/s from %.0f to %.0f across sizes, spread %.0f%% (target within 15%%) %s\n", lo, hi, 100 * (hi - lo) / hi,
             ((hi - lo) / hi <= 0.15 ? "MET" : "MISSED") } }'
if [[ "${MEMSNAP_BENCH_PERF:-0}" == 1 ]] && command -v perf >/dev/null; then
    echo
    echo "Where the time of memsnap info goes (perf stat, then the functions over 3% of samples):"
    perf stat -e task-clock,page-faults,cycles,instructions "$bin" info --format json "${files[-1]}" 2>&1 >/dev/null | sed 's/^/  /'
    perf record -q -o "$work/perf.data" "$bin" info --format json "${files[-1]}" >/dev/null 2>&1
    perf report -q -i "$work/perf.data" --no-children --sort sym --percent-limit 3 --stdio 2>/dev/null |
        grep -E '^ +[0-9]' | sed 's/^ */  /'
fi
if [[ "${MEMSNAP_BENCH_HEAPTRACK:-0}" == 1 ]] && command -v heaptrack >/dev/null; then
    echo
    echo "Where the memory of memsnap info goes (heaptrack, heap at its peak; reserved address space"
    echo "that was never touched counts here but not in the RSS above):"
    heaptrack -o "$work/heap" "$bin" info --format json "${files[-1]}" >/dev/null 2>&1
    heaptrack_print -f "$work/heap.zst" 2>/dev/null | sed -n '/^PEAK MEMORY CONSUMERS/,/^MOST TEMPORARY/p' |
        awk '/peak memory consumed over/ { size = $1; getline; if ($0 !~ /^ /) printf "  %-9s %s\n", size, substr($0, 1, 110) }' |
        head -n 8
fi
