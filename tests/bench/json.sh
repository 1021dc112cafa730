#!/usr/bin/env bash
# Benchmark of JSON snapshots: a real capture from ../shared/real scaled up
# (scale_real_snapshot.py), then written as JSON with json.dump (pickle_to_json.py), as users
# dump one. Measures, in one run and side by side: cat, memsnap info and Python's json.load of
# the same file. Prints wall time, MB/s of JSON text, peak RSS, and the issue's targets
# (reported, not enforced): >= 400 MB/s, and a 2.8 GB dump read in under 100 MB.
#
# Usage: tests/bench/json.sh [MEMSNAP_BINARY [SIZES_MIB...]]
#   default build/memsnap, sizes 10 100: the scaled pickle's size; its JSON is ~28 times larger
#   (100 MiB gives the 2.8 GB dump). Files are made once, in the cache directory.
# Environment: MEMSNAP_BENCH_DIR (cache, default /tmp/memsnap-bench),
#              MEMSNAP_BENCH_SOURCE (default ../shared/real/snapshots/nothanmin-a2_train_step.pickle),
#              MEMSNAP_BENCH_RUNS (best of N for memsnap, default 3),
#              MEMSNAP_BENCH_PYTHON_MAX_MB (json.load only on files up to this size, default 1000:
#                it holds about 5 times the file),
#              MEMSNAP_BENCH_PERF=1 (also the functions over 3% of `perf record` samples on the largest file).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-build/memsnap}"
shift || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(10 100)
cache="${MEMSNAP_BENCH_DIR:-/tmp/memsnap-bench}"
source_file="${MEMSNAP_BENCH_SOURCE:-$repo/../shared/real/snapshots/nothanmin-a2_train_step.pickle}"
runs="${MEMSNAP_BENCH_RUNS:-3}"
python="${PYTHON:-python3}"
python_max_mb="${MEMSNAP_BENCH_PYTHON_MAX_MB:-1000}"

source "$here/lib.sh"
[[ -x "$bin" ]] || die "memsnap binary '$bin' not found (build it first)"
[[ -r "$source_file" ]] || die "no real capture to scale at $source_file (../shared/real is needed)"
require_time
mkdir -p "$cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# As lib.sh's measure and best, with the CPU time (user + system) as a third figure: on a
# shared machine the wall time also counts the waits for a core, the CPU time does not.
measure_cpu() {
    local rc=0 t0 t1 e m u sys
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%e %M %U %S" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || rc=$?
    t1=$EPOCHREALTIME
    read -r e m u sys < <(tail -n 1 "$work/time")
    awk -v a="$t0" -v b="$t1" -v m="$m" -v u="$u" -v s="$sys" 'BEGIN{printf "%.3f %d %.2f\n", b - a, m, u + s}'
    return $rc
}
best_cpu() {
    local line s kb c bs="" bk=0 bc="" i
    for ((i = 1; i <= runs; i++)); do
        line=$(measure_cpu "$@") || return 1
        read -r s kb c <<<"$line"
        if [[ -z "$bs" ]] || awk -v a="$s" -v b="$bs" 'BEGIN{exit !(a < b)}'; then bs=$s; fi
        if [[ -z "$bc" ]] || awk -v a="$c" -v b="$bc" 'BEGIN{exit !(a < b)}'; then bc=$c; fi
        (( kb > bk )) && bk=$kb
    done
    echo "$bs $bk $bc"
}

echo "memsnap on JSON snapshots (json.dump of a scaled real capture)"
echo "  source:  $source_file"
echo "  binary:  $bin"
echo "  machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "  load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the start"
echo
files=()
for mib in "${sizes[@]}"; do
    base="$(scaled_capture "$source_file" "$mib")" base="${base%.pickle}"
    [[ -s "$base.pickle" ]] || { echo "  generating $base.pickle" >&2; "$python" "$here/scale_real_snapshot.py" --mib "$mib" "$source_file" "$base.pickle"; }
    [[ -s "$base.json" ]] || { echo "  generating $base.json" >&2; "$python" "$here/pickle_to_json.py" "$base.pickle" "$base.json.tmp" && mv "$base.json.tmp" "$base.json"; }
    files+=("$base.json")
done
printf "%-8s %-14s %8s %8s %8s %8s %9s %9s\n" "size" "reader" "wall s" "MB/s" "CPU s" "MB/CPU s" "peak MiB" "RSS/file"
summary=()
for f in "${files[@]}"; do
    bytes=$(stat -c %s "$f")
    cat "$f" >/dev/null  # page cache warm for every reader
    raw=$(best_cpu cat "$f") || failed "cat $f"
    info=$(best_cpu "$bin" info --format json "$f") || failed "memsnap info on $f"
    rows=("cat:$raw" "memsnap info:$info")
    if awk -v b="$bytes" -v m="$python_max_mb" 'BEGIN{exit !(b / 1e6 <= m)}'; then
        py=$(measure_cpu "$python" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["device_traces"][0]))' "$f") ||
            failed "json.load of $f"
        rows+=("json.load:$py")
    else
        py="- - -"
    fi
    for row in "${rows[@]}"; do
        IFS=: read -r name measured <<<"$row"
        read -r s kb c <<<"$measured"
        awk -v n="$name" -v s="$s" -v kb="$kb" -v c="$c" -v b="$bytes" \
            'BEGIN{printf "%-8s %-14s %8.3f %8.0f %8.2f %8.0f %9.1f %9.3f\n", sprintf("%.0fMB", b/1e6), n, s, b/1e6/s,
                   c, (c > 0 ? b/1e6/c : 0), kb/1024, kb*1024/b}'
    done
    [[ "$py" == "- - -" ]] && printf "%-8s %-14s %s\n" "$(awk -v b="$bytes" 'BEGIN{printf "%.0fMB", b/1e6}')" "json.load" \
        "not run (over MEMSNAP_BENCH_PYTHON_MAX_MB=$python_max_mb)"
    read -r info_s info_kb info_cpu <<<"$info"
    read -r raw_s raw_kb raw_cpu <<<"$raw"
    read -r py_s py_kb py_cpu <<<"$py"
    summary+=("$bytes $info_s $info_kb $raw_s $py_s $info_cpu")
done
echo
echo "Against the targets (issue 24: >= 400 MB/s of JSON text; a 2.8 GB dump in under 100 MB):"
printf '%s\n' "${summary[@]}" | awk '
{ mbps = $1 / 1e6 / $2; cpu = ($6 > 0) ? $1 / 1e6 / $6 : 0; mib = $3 / 1024;
  py = ($5 == "-") ? "json.load not run" : sprintf("%.1fx faster than json.load", $5 / $2);
  printf "  %5.0f MB: info %.0f MB/s of wall time (target >= 400) %s, %.0f MB per CPU second %s; %.1fx the time of cat; %s; peak %.0f MiB",
    $1 / 1e6, mbps, (mbps >= 400 ? "MET" : "MISSED"), cpu, (cpu >= 400 ? "MET" : "MISSED"), $2 / $4, py, mib;
  if ($1 >= 2.5e9) printf " (target < 100 MB for a 2.8 GB dump) %s", (mib * 1048576 < 100e6 ? "MET" : "MISSED");
  printf "\n" }'
echo "  load at the end: $(cut -d' ' -f1-3 /proc/loadavg) (above the core count, the wall times include waits for a core)"
if [[ "${MEMSNAP_BENCH_PERF:-0}" == 1 ]] && command -v perf >/dev/null; then
    echo
    echo "Where the time of memsnap info goes (the functions over 3% of perf record's samples):"
    perf record -q -o "$work/perf.data" "$bin" info --format json "${files[-1]}" >/dev/null 2>&1
    perf report -q -i "$work/perf.data" --no-children --sort sym --percent-limit 3 --stdio 2>/dev/null |
        grep -E '^ +[0-9]' | sed 's/^ */  /'
fi
