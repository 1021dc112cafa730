#!/usr/bin/env bash
# ctest bench-free-leftovers: scale_real_snapshot.py repeats a real trace; by default each
# copy's leftovers stay live to the trace's end without being blocks of the snapshot (memsnap
# trace says so under "disagrees"), and with --free-leftovers the trace ends holding what the
# snapshot holds (no disagreement at all: blocks nor segments), with every copy but the last
# freeing what it left.
# Skips (77) without python3 or the real captures.
#
#   tests/bench/check_free_leftovers.sh MEMSNAP_BINARY REAL_DIR [PYTHON]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
real=$2
python=${3:-python3}
source_capture="$real/snapshots/kkaitlyn111-a2_ctx128_forward.pickle"
if ! command -v "$python" >/dev/null; then
    echo "SKIPPED: no $python to run the scaler"
    exit 77
fi
if [[ ! -s "$source_capture" ]]; then
    echo "SKIPPED: $source_capture is absent"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$python" "$here/scale_real_snapshot.py" --mib 12 "$source_capture" "$tmp/repeat.pickle" || fail "scaling failed"
"$python" "$here/scale_real_snapshot.py" --mib 12 --free-leftovers "$source_capture" "$tmp/freed.pickle" ||
    fail "scaling with --free-leftovers failed"
"$bin" trace "$tmp/repeat.pickle" >"$tmp/repeat.txt" || fail "memsnap trace on the repeated trace"
"$bin" trace "$tmp/freed.pickle" >"$tmp/freed.txt" || fail "memsnap trace on the trace with leftovers freed"
grep -q "the trace leaves live are not active blocks of the snapshot" "$tmp/repeat.txt" ||
    fail "the repeated trace's leftovers are not reported"
grep -q "leaves live\|would be negative" "$tmp/freed.txt" && fail "the trace with leftovers freed disagrees with its snapshot"
# What the source leaves live (its alloc events less its frees), freed once by every copy but the last.
counts() { "$bin" info --format json "$1" | "$python" -c '
import json, sys
t = json.load(sys.stdin)["trace_events_by_action"]
print(t.get("alloc", 0), t.get("free_completed", 0))'; }
read -r src_allocs src_frees < <(counts "$source_capture")
read -r rep_allocs rep_frees < <(counts "$tmp/repeat.pickle")
read -r freed_allocs freed_frees < <(counts "$tmp/freed.pickle")
copies=$((rep_allocs / src_allocs))
[[ $copies -ge 3 && $freed_allocs -eq $rep_allocs ]] || fail "copies: $rep_allocs and $freed_allocs allocs of $src_allocs"
[[ $freed_frees -eq $((rep_frees + (copies - 1) * (src_allocs - src_frees))) ]] ||
    fail "$freed_frees frees with leftovers freed, $rep_frees without, $copies copies of $src_allocs allocs and $src_frees frees"
echo "ok: $copies copies; $rep_frees frees repeated, $freed_frees with each copy's leftovers freed"
