#!/usr/bin/env bash
# One screenshot per output format, each in the program people open it with: text, Markdown,
# JSON and CSV as a terminal shows them, the HTML report, the SVG flame graph, the diff's
# picture and the trace timeline in Chromium, DOT drawn by Graphviz, folded stacks in
# speedscope, pprof drawn by `go tool pprof -png`. The bundled fixtures only (the leak pair and
# the OOM loop), with paths relative to the checkout, so that any machine draws the same.
# Perfetto's JSON has no screenshot: its UI is a web app not installed here.
#
# tests/consumers/screenshots.sh MEMSNAP OUT_DIR NODE_MODULES
# Writes OUT_DIR/*.png; exits 77 naming the tools that are missing (the others are drawn).
set -uo pipefail
memsnap=$1 out=$2 modules=$3
cd "$(dirname "$0")/../.."
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
before=fixtures/pairs/leak/run_step100.pickle
after=fixtures/pairs/leak/run_step500.pickle
oom=fixtures/snapshots/oom_loop.pickle
missing=()

chromium=""
for name in chromium chromium-browser google-chrome; do
    command -v "$name" >/dev/null && chromium=$name && break
done

# shot FILE_URL PNG WIDTH HEIGHT [CHROMIUM_OPTION...]
shot() {
    local url=$1 png=$2 width=$3 height=$4
    shift 4
    timeout 180 "$chromium" --headless=new --no-sandbox --no-first-run --disable-extensions \
        --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
        --window-size="$width,$height" --screenshot="$out/$png" "$@" "$url" >/dev/null 2>&1
    [ -s "$out/$png" ] || { echo "screenshots.sh: $png was not written" >&2; exit 1; }
}

# terminal PNG FILE: a text file as a terminal shows it (its first 40 lines).
terminal() {
    local png=$1 file=$2
    {
        echo '<!DOCTYPE html><html><head><meta charset="UTF-8"><style>body{margin:0;background:#1e1e1e}'
        echo 'pre{margin:0;padding:12px;color:#d4d4d4;font:13px/1.35 monospace;white-space:pre-wrap;overflow-wrap:anywhere}</style></head><body><pre>'
        head -n 40 "$file" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'
        echo '</pre></body></html>'
    } >"$work/$png.html"
    shot "file://$work/$png.html" "$png" 1000 600
}

# svg PNG FILE: an SVG at its own size.
svg() {
    local png=$1 file=$2 width height
    width=$(sed -n 's/^<svg[^>]* width="\([0-9]*\)".*/\1/p' "$file" | head -1)
    height=$(sed -n 's/^<svg[^>]* height="\([0-9]*\)".*/\1/p' "$file" | head -1)
    shot "file://$file" "$png" "${width:-1200}" "$(( ${height:-800} > 900 ? 900 : ${height:-800} ))"
}

"$memsnap" --color never diff "$before" "$after" >"$work/diff.txt"
"$memsnap" diff "$before" "$after" --format markdown >"$work/diff.md"
"$memsnap" diff "$before" "$after" --format json >"$work/diff.json"
"$memsnap" diff "$before" "$after" --format csv >"$work/diff.csv"
"$memsnap" diff "$before" "$after" --format html >"$work/diff.html"
"$memsnap" info "$after" --format svg >"$work/flame.svg"
"$memsnap" diff "$before" "$after" --format svg >"$work/diff.svg"
"$memsnap" trace "$oom" --format svg >"$work/trace.svg"
"$memsnap" diff "$before" "$after" --format dot >"$work/diff.dot"
"$memsnap" info "$after" --format folded >"$work/live.folded"
"$memsnap" info "$after" --format pprof >"$work/live.pb.gz"

if [ -n "$chromium" ]; then
    terminal text.png "$work/diff.txt"
    terminal markdown.png "$work/diff.md"
    terminal json.png "$work/diff.json"
    terminal csv.png "$work/diff.csv"
    shot "file://$work/diff.html" html.png 1280 900
    svg flame.png "$work/flame.svg"
    svg diff.png "$work/diff.svg"
    svg trace.png "$work/trace.svg"
else
    missing+=("chromium (text, Markdown, JSON, CSV, HTML, SVG)")
fi

if command -v dot >/dev/null; then
    dot -Tpng -Gdpi=72 "$work/diff.dot" >"$out/dot.png"
else
    missing+=("Graphviz dot (DOT, pprof)")
fi

if command -v go >/dev/null && command -v dot >/dev/null; then
    # pprof's own picture of the live bytes (its graph, drawn by Graphviz).
    go tool pprof -png -sample_index=inuse_space "$work/live.pb.gz" >"$out/pprof.png" 2>/dev/null
    [ -s "$out/pprof.png" ] || { echo "screenshots.sh: go tool pprof -png wrote nothing" >&2; exit 1; }
elif ! command -v go >/dev/null; then
    missing+=("go (pprof)")
fi

# speedscope opens a profile the way its own command line does: a script that hands the file
# to the page, named in the page's address.
release="$modules/speedscope/dist/release"
if [ -n "$chromium" ] && [ -f "$release/index.html" ]; then
    printf 'speedscope.loadFileFromBase64("run_step500.folded", "%s")' "$(base64 -w0 "$work/live.folded")" \
        >"$work/profile.js"
    shot "file://$(realpath "$release")/index.html#localProfilePath=$work/profile.js&view=left-heavy" \
        speedscope.png 1200 600 --virtual-time-budget=10000 --use-angle=swiftshader --enable-unsafe-swiftshader
else
    missing+=("speedscope in $modules (npm install --prefix build speedscope)")
fi

if [ ${#missing[@]} -gt 0 ]; then
    printf 'SKIPPED: not drawn without %s\n' "${missing[@]}"
    exit 77
fi
