#!/usr/bin/env bash
# Benchmark: memsnap info on a large synthetic snapshot vs `cat` and vs the
# Python reader people use today (pickle.load with a refusing Unpickler).
#
# Usage: tests/bench/run.sh [MEMSNAP_BINARY [SIZE_MIB]]
#   MEMSNAP_BINARY  default build/memsnap (this script builds nothing)
#   SIZE_MIB        default 1024
# Environment: MEMSNAP_BENCH_DIR (cache dir, default /tmp/memsnap-bench),
#              MEMSNAP_BENCH_RUNS (memsnap runs, best is kept, default 3),
#              MEMSNAP_BENCH_SKIP_PYTHON=1 (skip the Python reference).
# Exit status: 0 when the measurements were taken (targets are reported, not
# enforced); non-zero when memsnap fails on the file or setup fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:-build/memsnap}"
mib="${2:-1024}"
runs="${MEMSNAP_BENCH_RUNS:-3}"
cache="${MEMSNAP_BENCH_DIR:-/tmp/memsnap-bench}"
python="${PYTHON:-python3}"

source "$here/lib.sh"

[[ -x "$bin" ]] || die "memsnap binary '$bin' not found or not executable (build it first)"
[[ "$mib" =~ ^[0-9]+$ && "$mib" -gt 0 ]] || die "size must be a positive integer number of MiB, got '$mib'"

require_time

# ---------------------------------------------------------------- input file
mkdir -p "$cache"
gen="$here/make_big_snapshot.py"
genhash="$(sha1sum "$gen" | cut -c1-10)"
file="$cache/snapshot-${mib}MiB-${genhash}.pickle"
if [[ ! -s "$file" ]]; then
    echo "bench: generating $file (cached for later runs)" >&2
    "$python" "$gen" --mib "$mib" "$file"
fi
bytes=$(stat -c %s "$file")

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# warm the page cache so every contender reads from memory
cat "$file" >/dev/null

# (a) raw read reference
read -r cat_s cat_kb < <(measure sh -c 'cat "$1" >/dev/null' sh "$file")

# (b) memsnap info, best of N runs (peak RSS: the largest seen)
if ! line=$(best "$bin" info "$file" --format json); then
    echo "bench: memsnap failed on $file:" >&2
    cat "$work/stderr" >&2
    exit 1
fi
read -r ms_s ms_kb <<<"$line"

# (c) reference Python reader (1 run)
py_s=""; py_kb=""
if [[ "${MEMSNAP_BENCH_SKIP_PYTHON:-0}" != 1 ]]; then
    if line=$(measure "$python" "$here/refusing_load.py" "$file"); then
        read -r py_s py_kb <<<"$line"
    else
        echo "bench: python reference reader failed (reported as n/a):" >&2
        cat "$work/stderr" >&2
    fi
fi

# ---------------------------------------------------------------- report
awk -v bytes="$bytes" -v file="$file" -v bin="$bin" -v runs="$runs" \
    -v cs="$cat_s" -v ck="$cat_kb" -v ms="$ms_s" -v mk="$ms_kb" \
    -v ps="$py_s" -v pk="$py_kb" '
function mbps(s) { return s > 0 ? sprintf("%.0f", bytes / 1e6 / s) : "n/a" }
function row(name, s, kb) {
    if (s == "") { printf "%-28s %9s %10s %9s %10s\n", name, "n/a", "n/a", "n/a", "n/a"; return }
    printf "%-28s %9.3f %10.1f %9s %10.3f\n", name, s, kb / 1024, mbps(s), kb * 1024 / bytes
}
BEGIN {
    gib = bytes / 1073741824
    printf "memsnap benchmark\n"
    printf "  file:    %s\n", file
    printf "  size:    %d bytes (%.1f MiB, %.3f GiB)\n", bytes, bytes / 1048576, gib
    printf "  binary:  %s\n\n", bin
    printf "%-28s %9s %10s %9s %10s\n", "reader", "wall s", "peak MiB", "MB/s", "RSS/file"
    row("cat (raw read)", cs, ck)
    row("memsnap info (best of " runs ")", ms, mk)
    row("python pickle.load", ps, pk)
    printf "\n"
    if (ps != "") {
        printf "memsnap vs python: %.1fx faster, %.3f x the memory\n", (ms > 0 ? ps / ms : 0), (pk > 0 ? mk / pk : 0)
    }
    if (cs > 0) printf "memsnap vs cat:    %.1fx the wall time of cat (%.1f%% of raw read speed)\n\n", ms / cs, 100 * cs / ms
    else printf "memsnap vs cat:    n/a (cat too fast to time)\n\n"
    wt = gib * 1.0
    rt = 0.5 * bytes / 1048576
    printf "target wall:  ~1 s per GiB -> <= %.2f s here: %.3f s  %s\n", wt, ms, (ms <= wt ? "MET" : "MISSED")
    printf "target RSS:   < 0.5 x file = %.1f MiB: %.1f MiB (%.3f x file)  %s\n", rt, mk / 1024, mk * 1024 / bytes, (mk / 1024 < rt ? "MET" : "MISSED")
}'
exit 0
