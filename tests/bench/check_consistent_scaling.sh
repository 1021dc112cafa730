#!/usr/bin/env bash
# ctest bench-consistent-scaling: scale_real_snapshot.py repeats a real trace. Repeated, a
# trace does not match its snapshot: each copy's leftovers stay live to its end without being
# blocks of the snapshot (memsnap trace: "disagrees"), and each copy frees again the blocks the
# source made before its trace, so that the sites at its peak add up to more than it (memsnap
# trace: "trace vs snapshot"). With --consistent it matches: no disagreement, the frees of
# blocks never seen allocated are the source's alone, and the counts of the events added are
# what the source leaves and frees unseen, once per copy but one.
# Skips (77) without python3 or the real captures.
#
#   tests/bench/check_consistent_scaling.sh MEMSNAP_BINARY REAL_DIR [PYTHON]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
real=$2
python=${3:-python3}
leaves="$real/snapshots/kkaitlyn111-a2_ctx128_forward.pickle"      # leaves 903 allocations live
frees_unseen="$real/snapshots/wedsonlin-a2_medium128_training.pickle" # frees blocks made before its trace
if ! command -v "$python" >/dev/null; then
    echo "SKIPPED: no $python to run the scaler"
    exit 77
fi
for f in "$leaves" "$frees_unseen"; do
    if [[ ! -s "$f" ]]; then
        echo "SKIPPED: $f is absent"
        exit 77
    fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
scale() { "$python" "$here/scale_real_snapshot.py" --mib 12 "$@" || fail "scale_real_snapshot.py $* failed"; }
trace() { "$bin" trace "$1" >"$2" || fail "memsnap trace $1"; }
# The number in "the trace frees N blocks it never saw allocated", or 0.
unseen() { grep -o "the trace frees [0-9]* blocks it never saw allocated" "$1" | grep -o "[0-9]*" || echo 0; }
counts() { "$bin" info --format json "$1" | "$python" -c '
import json, sys
t = json.load(sys.stdin)["trace_events_by_action"]
print(t.get("alloc", 0), t.get("free_completed", 0))'; }

for source in "$leaves" "$frees_unseen"; do
    name=$(basename "$source" .pickle)
    scale "$source" "$tmp/$name-repeat.pickle"
    scale --consistent "$source" "$tmp/$name-consistent.pickle"
    trace "$source" "$tmp/$name.txt"
    trace "$tmp/$name-repeat.pickle" "$tmp/$name-repeat.txt"
    trace "$tmp/$name-consistent.pickle" "$tmp/$name-consistent.txt"
    grep -q "^disagrees" "$tmp/$name-consistent.txt" && fail "$name scaled consistently disagrees with its snapshot"
    grep -q "trace vs snapshot" "$tmp/$name-consistent.txt" && fail "$name scaled consistently has a peak that does not add up"
    [[ $(unseen "$tmp/$name-consistent.txt") -eq $(unseen "$tmp/$name.txt") ]] ||
        fail "$name scaled consistently frees $(unseen "$tmp/$name-consistent.txt") blocks unseen, the source $(unseen "$tmp/$name.txt")"
done
# Repeated: what each says.
grep -q "the trace leaves live are not active blocks of the snapshot" "$tmp/kkaitlyn111-a2_ctx128_forward-repeat.txt" ||
    fail "the repeated ctx128 trace's leftovers are not reported"
[[ $(unseen "$tmp/wedsonlin-a2_medium128_training-repeat.txt") -gt $(unseen "$tmp/wedsonlin-a2_medium128_training.txt") ]] ||
    fail "the repeated medium128 trace does not free more blocks unseen than its source"
# Those blocks are live at its start, so the sites at its peak add up to more than the peak.
grep -q "trace vs snapshot  the allocations below add up to .* more than this peak: the trace does not match its snapshot" \
    "$tmp/wedsonlin-a2_medium128_training-repeat.txt" || fail "the repeated medium128 trace's peak does not say it does not add up"
# ctx128 frees no block unseen: its copies but the last free the 903 it leaves, and no alloc is added.
read -r src_allocs src_frees < <(counts "$leaves")
read -r rep_allocs rep_frees < <(counts "$tmp/kkaitlyn111-a2_ctx128_forward-repeat.pickle")
read -r con_allocs con_frees < <(counts "$tmp/kkaitlyn111-a2_ctx128_forward-consistent.pickle")
copies=$((rep_allocs / src_allocs))
[[ $copies -ge 3 && $con_allocs -eq $rep_allocs ]] || fail "ctx128 copies: $rep_allocs and $con_allocs allocs of $src_allocs"
[[ $con_frees -eq $((rep_frees + (copies - 1) * (src_allocs - src_frees))) ]] ||
    fail "ctx128: $con_frees frees scaled consistently, $rep_frees repeated, $copies copies of $src_allocs allocs and $src_frees frees"
echo "ok: $copies copies of ctx128, $rep_frees frees repeated and $con_frees consistent; medium128 training frees" \
    "$(unseen "$tmp/wedsonlin-a2_medium128_training-repeat.txt") blocks unseen repeated," \
    "$(unseen "$tmp/wedsonlin-a2_medium128_training-consistent.txt") consistent, as its source"
