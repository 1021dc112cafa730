# Shared by the benchmark scripts (sourced, not run): setup checks, one timed run, best of N.
# The caller sets $work (a scratch directory) and $runs (how many runs `best` takes).

die() { echo "bench: $*" >&2; exit 2; }

# /usr/bin/time gives the peak RSS; it is installed with apt-get when missing.
require_time() {
    [[ -x /usr/bin/time ]] && return
    echo "bench: /usr/bin/time missing, installing package 'time'" >&2
    if command -v apt-get >/dev/null; then
        local sudo_cmd=""
        [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
        $sudo_cmd apt-get install -y time >/dev/null || die "could not install 'time'"
    else
        die "/usr/bin/time is required (package 'time')"
    fi
}

# failed WHAT: says WHAT failed, with the stderr of the last measured command, and exits 1.
failed() { echo "bench: $* failed:" >&2; cat "$work/stderr" >&2; exit 1; }

# measure CMD...: runs CMD once (stdout to /dev/null, stderr to $work/stderr) and prints
# "wall_s peak_kib"; returns CMD's status. The wall time comes from $EPOCHREALTIME, since
# /usr/bin/time's %e has only 10 ms resolution.
measure() {
    local rc=0 t0 t1 e m
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || rc=$?
    t1=$EPOCHREALTIME
    read -r e m < <(tail -n 1 "$work/time")
    awk -v a="$t0" -v b="$t1" -v m="$m" 'BEGIN{printf "%.3f %d\n", b - a, m}'
    return $rc
}

# keep_best BEST LINE: of two "wall_s peak_kib" figures (BEST may be empty), the lower wall
# time with the larger peak RSS of the two.
keep_best() {
    local bs bk s kb
    read -r s kb <<<"$2"
    [[ -z "$1" ]] && { echo "$s $kb"; return; }
    read -r bs bk <<<"$1"
    awk -v a="$s" -v b="$bs" 'BEGIN{exit !(a < b)}' && bs=$s
    (( kb > bk )) && bk=$kb
    echo "$bs $bk"
}

# best CMD...: the best wall time of $runs runs and the largest peak RSS seen, as
# "wall_s peak_kib"; fails as soon as one run fails.
best() {
    local line result="" i
    for ((i = 1; i <= runs; i++)); do
        line=$(measure "$@") || return 1
        result=$(keep_best "$result" "$line")
    done
    echo "$result"
}

# scaled_capture SOURCE MIB [consistent]: where SOURCE scaled to MIB MiB is cached (in $cache).
# The scaler's hash is in the name, so that a changed scaler makes new files instead of the
# benchmark reading those an older one made.
scaled_capture() {
    local tag name
    tag=$(sha1sum "$here/scale_real_snapshot.py" | cut -c1-10)
    name=$(basename "$1")
    echo "$cache/real-${name%.*}-${2}MiB${3:+-$3}-$tag.pickle"
}
