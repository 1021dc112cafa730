#!/usr/bin/env bash
# Writes what a memsnap binary prints for a fixed battery of commands over the bundled
# fixtures and ../shared/real (every capture, every ordered pair of real snapshots, series
# and ranks), one file per command holding its stdout, stderr and exit code. Two binaries'
# corpora compared with `diff -r` show every changed byte: a refactoring must show none.
#   tests/tools/output_corpus.sh BINARY OUT_DIR
set -uo pipefail
binary=$(realpath "$1")
out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
real="$root/../shared/real"
mkdir -p "$out"
cd "$root"

run() {  # name, then the command's arguments
    local name=$1
    shift
    local file="$out/$name"
    { "$binary" "$@" >"$file.out" 2>"$file.err"; echo "exit $?" >>"$file.err"; } </dev/null
}

snapshots=(fixtures/snapshots/* fixtures/pairs/*/*.pickle fixtures/pairs/*/*.pkl)
[ -d "$real" ] && snapshots+=("$real"/snapshots/*.pickle "$real"/snapshots/*.pkl)
for s in "${snapshots[@]}"; do
    case "$s" in *.json|*.html|*.gz|*.pickle|*.pkl) ;; *) continue ;; esac
    [ "$(basename "$s")" = expected.json ] && continue
    n=$(echo "$s" | tr '/' '_')
    for f in text json; do run "info.$f.$n" info "$s" --format "$f"; done
    for f in text json markdown csv; do run "trace.$f.$n" trace "$s" --format "$f"; done
    run "info.folded.$n" info "$s" --format folded
done
summaries=(fixtures/summaries/*.txt fixtures/summaries/*.json)
[ -d "$real" ] && summaries+=("$real"/summaries/*.txt)
for s in "${summaries[@]}"; do
    case "$s" in *.truth.json) continue ;; esac
    n=$(echo "$s" | tr '/' '_')
    for f in text json; do run "info.$f.$n" info "$s" --format "$f"; done
done
for p in fixtures/pairs/*/; do
    files=("$p"*.pickle "$p"*.pkl)
    files=($(ls "$p" | grep -v expected.json | sed "s|^|$p|"))
    n=$(basename "$p")
    for f in text json markdown csv folded; do run "diff.$f.pair_$n" diff "${files[@]}" --format "$f"; done
done
if [ -d "$real" ]; then
    reals=("$real"/snapshots/*.pickle "$real"/snapshots/*.pkl)
    for a in "${reals[@]}"; do
        for b in "${reals[@]}"; do
            n="$(basename "$a")__$(basename "$b")"
            for f in text json; do run "diff.$f.$n" diff "$a" "$b" --format "$f"; done
        done
    done
    R="$real/snapshots"
    for f in text json csv; do
        run "trend.$f.wedsonlin_silmont" trend "$R"/silmont2000-a2_forward_fp32.pickle "$R"/silmont2000-a2_forward_bf16.pickle "$R"/wedsonlin-a2_medium128_inference.pickle "$R"/wedsonlin-a2_medium128_training.pickle --format "$f"
        run "trend.$f.dir" trend "$R" --format "$f"
        run "ranks.$f.dir" ranks "$R" --format "$f"
        run "ranks.$f.3dev" ranks "$R"/constructor-sun-gnn_3dev_expandable_oom.pickle --format "$f"
    done
    run "info.jsonl.dir" info --format jsonl "$R"
    S="$real/summaries"
    run "diff.text.gptneo" diff "$S"/gpt-neo-generation_pair_before.txt "$S"/gpt-neo-generation_pair_after.txt
fi
for f in text json csv markdown; do
    run "trend.$f.series" trend fixtures/summaries/series_trend_7_steps.txt --format "$f"
done
exit 0
