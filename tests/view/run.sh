#!/bin/sh
# Runs view_test.js with node; skips (77) where node is not installed.
command -v node >/dev/null 2>&1 || { echo "SKIPPED: node is not installed: the interactive view was not tested"; exit 77; }
exec node "$(dirname "$0")/view_test.js" "$@"
