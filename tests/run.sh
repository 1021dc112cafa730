#!/usr/bin/env bash
# The README's test command: configures and builds BUILD_DIR (default build, as Release), runs
# every test with ctest, and ends by saying how many tests were skipped, which, and why. A test
# is skipped, never passed, when its input or tool is missing: the real captures
# (../shared/real, or -DMEMSNAP_REAL_DIR), Graphviz's dot, Chromium, node and
# build/node_modules/@duckdb/node-api (-DMEMSNAP_NODE_MODULES). Skips do not fail this
# command; .ci/run, which installs everything, fails on any. Exits as ctest does.
#
#   tests/run.sh [BUILD_DIR [CMAKE_OPTION...]]
#
# CMAKE_OPTIONs replace the default -DCMAKE_BUILD_TYPE=Release.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build
if [ $# -gt 0 ]; then
    build=$1
    shift
fi
[ $# -gt 0 ] || set -- -DCMAKE_BUILD_TYPE=Release

cmake -S . -B "$build" "$@" || exit
cmake --build "$build" -j"$(nproc)" || exit
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One test per core (the hostile-input harness runs alone: it measures CPU time).
# MEMSNAP_CTEST_EXCLUDE (a ctest -E regex) leaves tests out of the run: not run, not skipped.
ctest --test-dir "$build" -j"$(nproc)" --output-on-failure ${MEMSNAP_CTEST_EXCLUDE:+-E "$MEMSNAP_CTEST_EXCLUDE"} | tee "$log"
status=${PIPESTATUS[0]}

# ctest lists the tests that did not run at its end: "	 12 - NAME (Skipped)". A skipped test
# says why in its output ("SKIPPED: ..."), which ctest keeps in LastTest.log.
skipped=$(sed -n 's/^[[:space:]]*[0-9][0-9]* - \(.*\) (Skipped)$/\1/p' "$log")
count=0
[ -z "$skipped" ] || count=$(printf '%s\n' "$skipped" | wc -l)
if [ "$count" -eq 0 ]; then
    echo "0 tests skipped"
else
    echo "$count tests skipped:"
    printf '%s\n' "$skipped" | sed 's/^/  /'
    echo "why:"
    grep -h '^SKIPPED: ' "$build/Testing/Temporary/LastTest.log" 2>/dev/null | sed 's/^SKIPPED: //' | sort | uniq -c
fi
exit "$status"
