#!/usr/bin/env bash
# examples/dask/jsonl.py on a local cluster of 2 worker processes writes what
# `memsnap info --format jsonl` writes over the real captures' snapshots/ and summaries/:
# byte-identical records, the same warnings (snapshots/expected.json skipped) or error, the
# same exit code. Once with relative directories (the workers run from this directory), once
# with a named non-capture among them (an error after every record). Skips (77) without the
# real captures or without /usr/bin/python3's distributed (Debian python3-distributed).
#
#   tests/dask/test_jsonl.sh [MEMSNAP [REAL_DIR]]   (default build/memsnap, ../shared/real)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
memsnap=$(realpath -- "${1:-$root/build/memsnap}")
real=${2:-$root/../shared/real}
skip() {
    echo "SKIPPED: $*"
    exit 77
}
[ -d "$real/snapshots" ] && [ -d "$real/summaries" ] || skip "no real captures in $real"
/usr/bin/python3 -c 'import distributed' 2>/dev/null || skip "/usr/bin/python3 has no distributed module (python3-distributed)"
[ -x "$memsnap" ] || { echo "FAIL: no memsnap binary at $memsnap"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check NAME CAPTURE...: memsnap's and the example's records, memsnap lines on stderr, exit code;
# fails (returns 1) at the first that differs.
check() {
    local name=$1 want_rc got_rc
    shift
    "$memsnap" info --format jsonl "$@" >"$tmp/want" 2>"$tmp/want.err"
    want_rc=$?
    /usr/bin/python3 "$root/examples/dask/jsonl.py" --workers 2 --memsnap "$memsnap" --output "$tmp/got" "$@" \
        2>"$tmp/got.err"
    got_rc=$?
    if [ ! -s "$tmp/want" ]; then
        echo "FAIL $name: memsnap wrote no records"
        return 1
    elif ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "FAIL $name: records differ ($(wc -l <"$tmp/want") from memsnap)"
        diff "$tmp/want" "$tmp/got" | head -5
        return 1
    elif ! diff <(grep '^memsnap: ' "$tmp/want.err") <(grep '^memsnap: ' "$tmp/got.err"); then
        echo "FAIL $name: warnings or error differ"
        cat "$tmp/got.err"
        return 1
    elif [ "$want_rc" != "$got_rc" ]; then
        echo "FAIL $name: exit code $got_rc, memsnap's $want_rc"
        cat "$tmp/got.err"
        return 1
    else
        echo "ok $name: $(wc -l <"$tmp/got") records, $(grep -c '^memsnap: ' "$tmp/got.err") warning/error lines, exit $got_rc"
    fi
}

failed=0
(cd "$real" && check directories snapshots summaries/) || failed=1
check "named non-capture" "$real/snapshots" "$real/snapshots/expected.json" "$real/summaries" || failed=1
exit $failed
