#!/usr/bin/env bash
# The test suite on a loaded machine: two busy loops (one per core of a 2-core CI host) run
# beside tests/run.sh for as long as it runs. Time budgets in tests are CPU time with slack,
# and wall-clock limits only catch hangs, so the suite must pass the same. Arguments go to
# tests/run.sh. Exits as tests/run.sh does.
set -uo pipefail
cd "$(dirname "$0")/.."
loops=()
for _ in 1 2; do
    (while :; do :; done) &
    loops+=($!)
done
trap 'kill "${loops[@]}" 2>/dev/null' EXIT
echo "tests/busy.sh: two busy loops running (pids ${loops[*]})"
tests/run.sh "$@"
