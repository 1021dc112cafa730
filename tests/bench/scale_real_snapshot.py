#!/usr/bin/env python3
"""A real capture scaled up, and the figures that say whether a generated capture looks real.

    scale_real_snapshot.py --mib N SOURCE OUTPUT   repeat SOURCE's trace until OUTPUT is ~N MiB
    scale_real_snapshot.py --figures FILE...       print each file's shape figures

Scaling: SOURCE (a real torch >= 2.1 snapshot with a trace, read from ../shared/real; the
files there are plain data written by torch) is loaded, and its trace entries are repeated
with copy.deepcopy, one copy per repetition, so that what torch shared inside the trace (a
frame list used by an alloc and its segment_alloc, say) stays shared in each copy and
nothing is shared across copies. Each copy moves its addresses by 2**36 and its times past
the previous copy's last time. The result is written the way _dump_snapshot writes (Python
pickle, protocol 4). This reads the real file with pickle.load: it is a benchmark helper
that runs on the project's own reference data, never on user input.

Figures: bytes per trace event, frames per
event, the opcode mix (share of each opcode among all), and memo sharing (memo reads per
memo write, and per frame).
"""
import argparse
import collections
import copy
import pickle
import pickletools
import sys


def scale(source, mib, output):
    with open(source, "rb") as f:
        snap = pickle.load(f)
    traces = snap.get("device_traces") or []
    if not traces or not any(traces):
        sys.exit("scale: %s has no trace to repeat" % source)
    base = [list(t) for t in traces]
    source_size = len(pickle.dumps(snap, protocol=4))
    per_copy = max(1, source_size)
    copies = max(1, (mib << 20) // per_copy)
    for d, entries in enumerate(base):
        if not entries:
            continue
        times = [e.get("time_us", 0) for e in entries]
        span = (max(times) - min(times) + 1) if times else 1
        out = []
        for k in range(copies):
            batch = copy.deepcopy(entries)
            for e in batch:
                if e.get("action") != "oom" and "addr" in e:
                    e["addr"] += k << 36
                if "time_us" in e:
                    e["time_us"] += k * span
            out.extend(batch)
        snap["device_traces"][d] = out
    with open(output, "wb") as f:
        pickle.dump(snap, f, protocol=4)


def figures(path):
    with open(path, "rb") as f:
        data = f.read()
    ops = collections.Counter()
    memo_puts = memo_gets = 0
    for op, arg, _ in pickletools.genops(data):
        ops[op.name] += 1
        if op.name in ("MEMOIZE", "BINPUT", "LONG_BINPUT", "PUT"):
            memo_puts += 1
        elif op.name in ("BINGET", "LONG_BINGET", "GET"):
            memo_gets += 1
    snap = pickle.loads(data)
    entries = [e for trace in (snap.get("device_traces") or []) for e in trace]
    events = len(entries)
    frames = sum(len(e.get("frames") or []) for e in entries)
    total = sum(ops.values())
    mix = ", ".join("%s %.1f%%" % (name, 100.0 * n / total) for name, n in ops.most_common(8))
    return {
        "file": path,
        "bytes": len(data),
        "events": events,
        "bytes_per_event": len(data) / events if events else 0,
        "frames_per_event": frames / events if events else 0,
        "memo_gets_per_put": memo_gets / memo_puts if memo_puts else 0,
        "memo_gets_per_frame": memo_gets / frames if frames else 0,
        "opcodes": mix,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int)
    ap.add_argument("--figures", action="store_true")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.figures:
        for path in a.files:
            f = figures(path)
            print("%s: %d bytes, %d events, %.0f bytes/event, %.1f frames/event, memo %.2f gets/put, "
                  "%.2f gets/frame" % (f["file"], f["bytes"], f["events"], f["bytes_per_event"],
                                       f["frames_per_event"], f["memo_gets_per_put"], f["memo_gets_per_frame"]))
            print("    opcodes: %s" % f["opcodes"])
        return
    if a.mib is None or len(a.files) != 2:
        sys.exit("usage: scale_real_snapshot.py --mib N SOURCE OUTPUT | --figures FILE...")
    scale(a.files[0], a.mib, a.files[1])


if __name__ == "__main__":
    main()
