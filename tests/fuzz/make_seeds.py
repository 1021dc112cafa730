#!/usr/bin/env python3
"""Writes the fuzz seeds that random mutation does not find: sizes, counts and steps near
2^62 and 2^63 in snapshots, memory_stats and series, and wrapped captures (gzip, zstd with a
skippable frame first, a _memory_viz.py page). Deterministic; standard library only.

    tests/fuzz/make_seeds.py        (writes tests/fuzz/corpus/{snapshot,series,unwrap}/seed-*)
"""
import base64
import gzip
import pathlib
import pickle
import struct

HERE = pathlib.Path(__file__).resolve().parent
BIG = [2**62, 2**62 + 2**61, 2**63 - 1]


def frames(name):
    return [{"filename": "/home/u/train.py", "line": 10, "name": name}]


def snapshot(size, count=2, trace_size=None):
    base = 2**40
    blocks = [{"address": base + k * size if size < 2**50 else base, "size": size, "requested_size": size,
               "state": "active_allocated", "frames": frames("step")} for k in range(count)]
    segment = {"device": 0, "address": base, "total_size": size * count, "allocated_size": size * count,
               "active_size": size * count, "requested_size": size * count, "stream": 0,
               "segment_type": "large", "blocks": blocks}
    trace = [{"action": "segment_alloc", "addr": base, "size": trace_size or size * count, "stream": 0,
              "time_us": 1, "frames": frames("step")}]
    trace += [{"action": "alloc", "addr": base + k, "size": trace_size or size, "stream": 0, "time_us": 2 + k,
               "frames": frames("step")} for k in range(count)]
    trace += [{"action": "free_completed", "addr": base, "size": -(trace_size or size), "stream": 0,
               "time_us": 10, "frames": []}]
    return pickle.dumps({"segments": [segment], "device_traces": [trace]}, protocol=4)


def stats(value):
    keys = ["allocated_bytes.all.current", "reserved_bytes.all.current", "active_bytes.all.current",
            "allocated_bytes.all.peak", "num_ooms", "num_alloc_retries", "allocation.all.current"]
    return repr({k: value for k in keys}).encode()


def series(parts):
    header = "memsnap-series " + " ".join(str(len(p)) for p in parts[:-1]) + "\n"
    return header.encode() + b"".join(parts)


def zstd_raw(payload, skippable=b"memsnap"):
    """A skippable frame, then a zstd frame of raw blocks (no compression library needed)."""
    out = struct.pack("<II", 0x184D2A50, len(skippable)) + skippable
    out += struct.pack("<I", 0xFD2FB528) + bytes([0x00, 0x38])  # no FCS, window 128 KiB
    chunks = [payload[i:i + 65536] for i in range(0, len(payload), 65536)] or [b""]
    for i, chunk in enumerate(chunks):
        last = 1 if i == len(chunks) - 1 else 0
        out += (last | (len(chunk) << 3)).to_bytes(3, "little") + chunk
    return out


def write(target, name, data):
    folder = HERE / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def main():
    for k, big in enumerate(BIG):
        write("snapshot", f"seed-size-{k}", snapshot(big, 2))
        write("snapshot", f"seed-trace-{k}", snapshot(4096, 2, trace_size=big))
        write("series", f"seed-sizes-{k}", series([snapshot(4096), snapshot(big), snapshot(4096)]))
        write("series", f"seed-stats-{k}", series([stats(1), stats(big), stats(-big)]))
    small = snapshot(4096)
    write("unwrap", "seed-gzip", gzip.compress(small, mtime=0))
    write("unwrap", "seed-zstd-skippable", zstd_raw(small))
    page = ('<!DOCTYPE html><script>const local_files = [{"name": "snapshot.pickle", "base64": "'
            + base64.b64encode(small).decode() + '"}]</script>')
    write("unwrap", "seed-viz-page", page.encode())


if __name__ == "__main__":
    main()
