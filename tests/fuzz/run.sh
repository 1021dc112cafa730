#!/usr/bin/env bash
# Fuzzes memsnap's readers with libFuzzer in a clang ASan + UBSan build, SECONDS per target.
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
#       targets: pickle snapshot stats diff unwrap pictures series (default: all)
#
# Seeds: the fixtures, ../shared/real (read in place) and tests/fuzz/corpus/TARGET; pairs of
# fixture captures for the diff target. New coverage goes to a work corpus under
# $MEMSNAP_FUZZ_WORK (default /tmp/memsnap-fuzz); a crash, leak or sanitizer report is
# written to tests/fuzz/corpus/TARGET/, where plain ctest replays it from then on.
# Targets run side by side, one per core. Prints one row per target (executions, new
# inputs, peak memory) and exits 1 when a target found something. The seeds near 2^62 and
# 2^63 in tests/fuzz/corpus come from tests/fuzz/make_seeds.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(pickle snapshot stats diff unwrap pictures series)
build=${MEMSNAP_FUZZ_BUILD:-build-fuzz}
work=${MEMSNAP_FUZZ_WORK:-/tmp/memsnap-fuzz}

if ! command -v clang++ >/dev/null || ! dpkg -s libclang-rt-14-dev >/dev/null 2>&1; then
    echo "fuzz: installing clang and libclang-rt-14-dev" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >&2
fi

cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMEMSNAP_SANITIZE=address,undefined -DMEMSNAP_FUZZ=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target $(printf 'memsnap_fuzz_%s ' "${targets[@]}")

seed_dirs() {
    local target=$1
    case $target in
        pickle|snapshot|unwrap|pictures) echo fixtures/snapshots fixtures/malformed fixtures/pairs ;;
        stats) echo fixtures/summaries ;;
        diff) echo "$work/diff/pairs" fixtures/pairs fixtures/summaries ;;
        series) echo "$work/series/pairs" fixtures/summaries ;;
    esac
    [ -d ../shared/real ] && case $target in
        stats | series) echo ../shared/real/summaries ;;
        *) echo ../shared/real/snapshots ;;
    esac
    echo "tests/fuzz/corpus/$target"
}

# The diff target reads "memsnap-diff N\n" + N bytes of one capture + the other.
make_pairs() {
    local out=$work/diff/pairs
    rm -rf "$out" && mkdir -p "$out"
    local n=0
    for dir in fixtures/pairs/*/; do
        local files=("$dir"*.pickle "$dir"*.pkl "$dir"*.json "$dir"*.txt)
        local captures=()
        for f in "${files[@]}"; do [ -f "$f" ] && [ "$(basename "$f")" != expected.json ] && captures+=("$f"); done
        [ ${#captures[@]} -ge 2 ] || continue
        { printf 'memsnap-diff %d\n' "$(stat -c %s "${captures[0]}")"; cat "${captures[0]}" "${captures[1]}"; } \
            >"$out/pair-$((n++))"
    done
    local summaries=(fixtures/summaries/*.txt)
    for ((i = 0; i + 1 < ${#summaries[@]}; i += 2)); do
        { printf 'memsnap-diff %d\n' "$(stat -c %s "${summaries[i]}")"; cat "${summaries[i]}" "${summaries[i + 1]}"; } \
            >"$out/pair-$((n++))"
    done
}

# The series target reads "memsnap-series N1 N2\n" + three captures: the fixture pairs
# with a third capture, the first again.
make_series() {
    local out=$work/series/pairs
    rm -rf "$out" && mkdir -p "$out"
    local n=0
    for dir in fixtures/pairs/*/; do
        local captures=()
        for f in "$dir"*.pickle; do [ -f "$f" ] && captures+=("$f"); done
        [ ${#captures[@]} -ge 2 ] || continue
        { printf 'memsnap-series %d %d\n' "$(stat -c %s "${captures[0]}")" "$(stat -c %s "${captures[1]}")"
          cat "${captures[0]}" "${captures[1]}" "${captures[0]}"; } >"$out/series-$((n++))"
    done
}

fuzz_one() {
    local target=$1 log=$work/$1/log.txt
    # shellcheck disable=SC2046
    if "$build/tests/fuzz/memsnap_fuzz_$target" -max_total_time="$seconds" -max_len=262144 -timeout=20 \
        -rss_limit_mb=2560 -dict=tests/fuzz/memsnap.dict -print_final_stats=1 \
        -artifact_prefix="tests/fuzz/corpus/$target/" "$work/$target/corpus" $(seed_dirs "$target") >"$log" 2>&1; then
        echo clean >"$work/$target/result"
    else
        echo "FOUND (see $log)" >"$work/$target/result"
    fi
}

for target in "${targets[@]}"; do
    mkdir -p "$work/$target/corpus" "tests/fuzz/corpus/$target"
    rm -f "$work/$target/result"
done
[[ " ${targets[*]} " == *" diff "* ]] && make_pairs
[[ " ${targets[*]} " == *" series "* ]] && make_series
# One target per core at a time.
jobs_max=$(nproc)
for target in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
    fuzz_one "$target" &
done
wait

status=0
rows=()
for target in "${targets[@]}"; do
    log=$work/$target/log.txt
    result=$(cat "$work/$target/result" 2>/dev/null || echo "FOUND (no result: see $log)")
    [ "$result" = clean ] || status=1
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
    rows+=("$(printf '%-10s %8ss %14s %10s %10s  %s' "$target" "$seconds" "${execs:-?}" "${added:-?}" "${peak:-?}" "$result")")
done

printf '%-10s %9s %14s %10s %10s  %s\n' target time executions "new units" "peak MB" result
printf '%s\n' "${rows[@]}"
exit $status
