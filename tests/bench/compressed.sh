#!/usr/bin/env bash
# Benchmark of compressed captures (issue 24): a real capture scaled to ~400 MiB
# (scale_real_snapshot.py, the same file real_shaped.sh makes), gzipped and zstd'ed once, read
# by `memsnap info`. Prints, in one run and side by side: zcat / zstdcat to /dev/null, memsnap
# info of the plain file, and of each compressed one, with the targets:
#   peak RSS <= 0.25 x the uncompressed size + 50 MB (MB: 10^6 bytes)
#   wall time <= 1.3 x (zcat or zstdcat to /dev/null + memsnap info of the plain file)
# Targets are reported, not enforced.
#
# Usage: tests/bench/compressed.sh [MEMSNAP_BINARY [SIZE_MIB]]   (default build/memsnap 400)
# Environment: MEMSNAP_BENCH_DIR (cache, default /tmp/memsnap-bench),
#              MEMSNAP_BENCH_SOURCE (default ../shared/real/snapshots/nothanmin-a2_train_step.pickle),
#              MEMSNAP_BENCH_RUNS (best of N for every timed command, default 3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-build/memsnap}"
mib="${2:-400}"
cache="${MEMSNAP_BENCH_DIR:-/tmp/memsnap-bench}"
source_file="${MEMSNAP_BENCH_SOURCE:-$repo/../shared/real/snapshots/nothanmin-a2_train_step.pickle}"
runs="${MEMSNAP_BENCH_RUNS:-3}"
python="${PYTHON:-python3}"

source "$here/lib.sh"
[[ -x "$bin" ]] || die "memsnap binary '$bin' not found (build it first)"
[[ "$mib" =~ ^[0-9]+$ ]] || die "size must be a whole number of MiB, not '$mib'"
[[ -r "$source_file" ]] || die "no real capture to scale at $source_file (../shared/real is needed)"
for tool in gzip zcat zstd zstdcat; do command -v "$tool" >/dev/null || die "$tool is required"; done
require_time
mkdir -p "$cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

f="$(scaled_capture "$source_file" "$mib")"
[[ -s "$f" ]] || { echo "  generating $f" >&2; "$python" "$here/scale_real_snapshot.py" --mib "$mib" "$source_file" "$f"; }
[[ -s "$f.gz" ]] || { echo "  gzip -6 $f" >&2; gzip -6 -c "$f" >"$f.gz.part" && mv "$f.gz.part" "$f.gz"; }
[[ -s "$f.zst" ]] || { echo "  zstd -3 $f" >&2; zstd -q -3 -c "$f" >"$f.zst.part" && mv "$f.zst.part" "$f.zst"; }
bytes=$(stat -c %s "$f")

echo "memsnap on compressed captures"
echo "  file:    $f ($(awk -v b="$bytes" 'BEGIN{printf "%.0f MB", b/1e6}'))"
echo "  gzip:    $(stat -c %s "$f.gz") bytes; zstd: $(stat -c %s "$f.zst") bytes"
echo "  binary:  $bin"
echo "  machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo
cat "$f" "$f.gz" "$f.zst" >/dev/null  # page cache warm for every reader

plain=$(best "$bin" info --format json "$f") || failed "memsnap info on $f"
zcat_t=$(best zcat "$f.gz") || failed "zcat $f.gz"
zstdcat_t=$(best zstdcat "$f.zst") || failed "zstdcat $f.zst"
gz=$(best "$bin" info --format json "$f.gz") || failed "memsnap info on $f.gz"
zst=$(best "$bin" info --format json "$f.zst") || failed "memsnap info on $f.zst"

printf "%-24s %9s %10s\n" "reader" "wall s" "peak MiB"
for row in "memsnap info (plain):$plain" "zcat > /dev/null:$zcat_t" "zstdcat > /dev/null:$zstdcat_t" \
    "memsnap info (.gz):$gz" "memsnap info (.zst):$zst"; do
    IFS=: read -r name figures <<<"$row"
    read -r s kb <<<"$figures"
    awk -v n="$name" -v s="$s" -v kb="$kb" 'BEGIN{printf "%-24s %9.3f %10.1f\n", n, s, kb/1024}'
done

echo
echo "Against the targets (issue 24: RSS <= 0.25 x uncompressed + 50 MB; time <= 1.3 x (decompressor to /dev/null + plain info)):"
read -r plain_s plain_kb <<<"$plain"
for row in "gzip:$gz:$zcat_t:zcat" "zstd:$zst:$zstdcat_t:zstdcat"; do
    IFS=: read -r kind ours theirs tool <<<"$row"
    read -r s kb <<<"$ours"
    read -r t _ <<<"$theirs"
    awk -v k="$kind" -v s="$s" -v kb="$kb" -v t="$t" -v p="$plain_s" -v b="$bytes" -v tool="$tool" 'BEGIN{
        rss = kb * 1024 / 1e6; rss_target = 0.25 * b / 1e6 + 50; ref = t + p;
        printf "  %-4s: peak RSS %.0f MB (target <= %.0f) %s; %.2f s = %.2f x (%s %.2f s + info %.2f s) (target <= 1.3) %s\n",
            k, rss, rss_target, (rss <= rss_target ? "MET" : "MISSED"), s, s / ref, tool, t, p,
            (s / ref <= 1.3 ? "MET" : "MISSED") }'
done
