#!/usr/bin/env bash
# ctest bench-missed-shape: make_missed_shape.py writes the same file twice (deterministic) and
# every figure that missed_shape.tsv lists is within 10% of it (`scale_real_snapshot.py
# --figures --expect missed_shape.tsv --strict`). Skips (77) without python3.
#
#   tests/bench/check_missed_shape.sh [PYTHON]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${1:-python3}
if ! command -v "$python" >/dev/null; then
    echo "SKIPPED: no $python to run the generator"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" "$here/make_missed_shape.py" "$tmp/a.pickle" || { echo "FAIL: make_missed_shape.py failed"; exit 1; }
"$python" "$here/make_missed_shape.py" "$tmp/b.pickle" || { echo "FAIL: make_missed_shape.py failed"; exit 1; }
cmp -s "$tmp/a.pickle" "$tmp/b.pickle" || { echo "FAIL: make_missed_shape.py wrote two different files"; exit 1; }
"$python" "$here/scale_real_snapshot.py" --figures --expect "$here/missed_shape.tsv" --strict "$tmp/a.pickle" ||
    { echo "FAIL: a figure of the generated file is not within 10% of missed_shape.tsv"; exit 1; }
