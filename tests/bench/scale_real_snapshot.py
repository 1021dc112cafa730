#!/usr/bin/env python3
"""A real capture scaled up, and the figures that say whether a generated capture looks real.

    scale_real_snapshot.py --mib N SOURCE OUTPUT       repeat SOURCE's trace until OUTPUT is ~N MiB
    scale_real_snapshot.py --mib N --consistent SOURCE OUTPUT
                                                   the same, each copy making what it frees and
                                                   freeing what it makes, so that the trace
                                                   matches its snapshot
    scale_real_snapshot.py --figures [--strict] REFERENCE FILE...
                                                   each file's shape figures beside REFERENCE's
    scale_real_snapshot.py --figures --expect TABLE [--strict] FILE...
                                                   each file's figures beside those TABLE lists

Scaling: SOURCE (a real torch >= 2.1 snapshot with a trace, read from ../shared/real; the
files there are plain data written by torch) is loaded, and its trace entries are repeated,
each copy as one more round of the same program would be: what torch shares inside the trace
(a frame list used by an alloc and its segment_alloc, say) stays shared in each copy, what it
makes once per snapshot (a frame dict per distinct frame, the action names) is shared by every
copy, and what it makes per entry (the entry, its frame list, its compile context string) is
new in each (see _replica). Each copy moves its addresses by 2**36 and its times past the
previous copy's last time. The allocations a copy leaves live then stay live in the trace
to its end, though the snapshot does not hold them, and the blocks made before the trace that
the source frees are freed again by every copy, never allocated (memsnap's trace says so under
"disagrees" and "recording"): a trace that does not match its snapshot. With --consistent, each
copy but the first starts by allocating the blocks it frees unseen (alloc events at its first
time, carrying the free's frames), each copy but the last ends by freeing the blocks and
segments it leaves (free_requested and free_completed, then segment_free, at its last time,
carrying the alloc's frames), and the last copy keeps the source's addresses: the trace ends
holding the snapshot's blocks and segments, as a long run that builds and drops its tensors and
its cache each round would. The result is written the way _dump_snapshot writes (Python
pickle, protocol 4). This reads the real file with pickle.load: it is a benchmark helper
that runs on the project's own reference data, never on user input.

Figures, read from the opcodes (no object is rebuilt, so a 1 GiB file takes a few minutes
and memory for its memo): bytes per trace event, frames per event, the opcode mix (share
of each opcode among all), and memo sharing: memo reads per memo write and per frame; how
often frame lists are read from the memo (a list torch shares) rather than built; frame
references per distinct frame dict; built frame lists per distinct sequence of memo ids
(stacks that repeat, built again from the same shared frame dicts); which strings are read
from the memo (dict keys, frame names and filenames, action strings) and how many string
bytes a trace event costs. Every figure is a ratio, so that a 3 MB capture and a 1 GiB file
compare directly. Each file after the first is marked by whether each figure is within 10%
of the first file's (the reference); --strict makes the exit status say whether all are.
"""
import argparse
import collections
import os
import pickle
import pickletools
import struct
import sys


def _key(e):
    return (e.get("device"), e.get("addr"))


def _as(event, action, time_us, shared_strings):
    """An entry for `event`'s block with another action: its frame list is `event`'s (torch
    records a block's frees with the traceback of its alloc), its own strings are new (torch makes
    an entry's compile context string per entry)."""
    out = {k: _replica(v, {}, shared_strings) if isinstance(v, str) else v for k, v in event.items()}
    out["action"] = action
    if "time_us" in out:
        out["time_us"] = time_us
    return out


def _unseen_allocs(batch, time_us, shared_strings):
    """Alloc events at `time_us` for the blocks `batch` frees without allocating them first."""
    allocated, made = set(), []
    for e in batch:
        action = e.get("action")
        if action == "alloc":
            allocated.add(_key(e))
        elif action == "free_completed" and _key(e) not in allocated:
            allocated.add(_key(e))
            made.append(_as(e, "alloc", time_us, shared_strings))
    return made


def _leftover_frees(batch, time_us, shared_strings):
    """Events at `time_us` that free the allocations `batch` leaves live, then its segments."""
    live, segments = {}, {}
    for e in batch:
        action = e.get("action")
        if action == "alloc":
            live[_key(e)] = e
        elif action == "free_completed":
            live.pop(_key(e), None)
        elif action == "segment_alloc":
            segments[_key(e)] = e
        elif action == "segment_free":
            segments.pop(_key(e), None)
    frees = [_as(e, a, time_us, shared_strings) for e in live.values() for a in ("free_requested", "free_completed")]
    return frees + [_as(e, "segment_free", time_us, shared_strings) for e in segments.values()]


def _is_frame(obj):
    return isinstance(obj, dict) and "filename" in obj and "line" in obj and "name" in obj


def _replica(obj, made, shared_strings):
    """A copy of trace entries `obj` for one more round of the program, sharing within itself what
    `obj` shares (`made`: id of each original -> its copy) and with `obj` what torch would share
    across rounds, by what _memory_snapshot builds:
    - frame dicts: py_symbolize makes one per distinct frame for the whole snapshot, so every
      round's frame lists hold the same dicts (and their name and filename strings);
    - strings in `shared_strings` (those more than one source entry holds: the action names,
      made once per snapshot);
    - dict keys.
    Everything else is new: the entries, their frame lists (one per captured traceback) and the
    strings an entry alone holds (its "N/A" compile context). copy.deepcopy had kept every
    string and made new frame dicts: a scaled 3-device capture then read 92% of its frame names
    from the memo where the source reads none, and each entry's compile context as a reference
    to the first round's bytes, at a new far offset of the file every time."""
    if isinstance(obj, str):
        if id(obj) in shared_strings:
            return obj
        got = made.get(id(obj))
        if got is None:
            # Equal but a new object; "" and one character are CPython singletons, in torch's
            # files too.
            got = made[id(obj)] = obj if len(obj) < 2 else obj[:1] + obj[1:]
        return got
    if _is_frame(obj) or not isinstance(obj, (dict, list, tuple)):
        return obj
    got = made.get(id(obj))
    if got is not None:
        return got
    if isinstance(obj, dict):
        got = made[id(obj)] = {}
        for key, value in obj.items():
            got[key] = _replica(value, made, shared_strings)
    elif isinstance(obj, list):
        got = made[id(obj)] = []
        got.extend(_replica(x, made, shared_strings) for x in obj)
    else:
        got = made[id(obj)] = tuple(_replica(x, made, shared_strings) for x in obj)
    return got


def _strings_of_several(traces):
    """ids of the strings that more than one trace entry holds as a value."""
    holders = collections.Counter()
    for entries in traces:
        for e in entries:
            for s in {id(v): v for v in e.values() if isinstance(v, str)}:
                holders[s] += 1
    return {s for s, n in holders.items() if n > 1}


def scale(source, mib, output, consistent=False):
    with open(source, "rb") as f:
        snap = pickle.load(f)
    traces = snap.get("device_traces") or []
    if not traces or not any(traces):
        sys.exit("scale: %s has no trace to repeat" % source)
    base = [list(t) for t in traces]
    shared_strings = _strings_of_several(base)
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
            batch = _replica(entries, {}, shared_strings)
            # Consistent: the last copy is at the source's own addresses, the blocks its snapshot holds.
            shift = (copies - 1 - k if consistent else k) << 36
            for e in batch:
                if e.get("action") != "oom" and "addr" in e:
                    e["addr"] += shift
                if "time_us" in e:
                    e["time_us"] += k * span
            if consistent and k != 0:
                out.extend(_unseen_allocs(batch, min(times) + k * span, shared_strings))
            out.extend(batch)
            if consistent and k != copies - 1:
                out.extend(_leftover_frees(batch, max(times) + k * span, shared_strings))
        snap["device_traces"][d] = out
    with open(output, "wb") as f:
        pickle.dump(snap, f, protocol=4)


class _Read:
    """A memo read on the walker's stack: the object read and its memo id."""
    __slots__ = ("obj", "idx")

    def __init__(self, obj, idx):
        self.obj = obj
        self.idx = idx


class _Built:
    """A dict, list or tuple built in the file (not read from the memo).

    Dicts get a kind from their keys; lists keep the memo ids of their elements until
    their parent says whether they are frame lists, so that nothing grows with the file
    but the memo itself."""
    __slots__ = ("idx", "kind", "n", "elems", "fresh", "short")

    def __init__(self):
        self.idx = None
        self.kind = None
        self.n = 0          # list length
        self.elems = None   # memo ids of the elements (lists only, until classified)
        self.fresh = 0      # elements built in place rather than read from the memo
        self.short = 0      # elements read with BINGET (memo id < 256)


def _dict_kind(keys):
    if "filename" in keys:
        return "frame"
    if "action" in keys:
        return "entry"
    if "blocks" in keys:
        return "segment"
    if "state" in keys:
        return "block"
    return "other"


def _text(x):
    x = x.obj if type(x) is _Read else x
    return x if type(x) is str else None


# Scalars whose value the figures do not need, by opcode: the bytes of their argument.
_SCALAR_ARG_BYTES = {
    0x4B: 1,  # BININT1
    0x4D: 2,  # BININT2
    0x4A: 4,  # BININT
    0x47: 8,  # BINFLOAT
    0x88: 0,  # NEWTRUE
    0x89: 0,  # NEWFALSE
    0x4E: 0,  # NONE
}


def walk(data):
    """Count what the figures need in one pass over the opcodes of a pickle of plain data.

    Torch writes its snapshot with the C pickler (protocol 4), so a value written twice is
    written once and then read from the memo (BINGET/LONG_BINGET). The walk follows the
    stack like an unpickler but only keeps, per dict, its kind and, per list, the memo ids
    of its elements, which is what tells a frame list that repeats a stack from one that
    builds new frames."""
    unpack_q = struct.Struct("<Q").unpack_from
    unpack_i = struct.Struct("<I").unpack_from
    opcount = [0] * 256
    stack, marks, memo = [], [], []
    c = collections.Counter()       # the counts below, by name
    sequences = set()               # memo-id sequences of the frame lists built
    top_keys = []                   # (offset, key) of the top-level dict's keys
    pos, end = 0, len(data)
    while pos < end:
        op = data[pos]
        opcount[op] += 1
        pos += 1
        if op == 0x6A:    # LONG_BINGET
            i = unpack_i(data, pos)[0]
            pos += 4
            stack.append(_Read(memo[i], i))
        elif op == 0x68:  # BINGET
            i = data[pos]
            pos += 1
            stack.append(_Read(memo[i], i))
        elif op == 0x94:  # MEMOIZE
            top = stack[-1]
            if type(top) is _Built:
                top.idx = len(memo)
            memo.append(top)
        elif op == 0x28:  # MARK
            marks.append(len(stack))
        elif op == 0x8A:  # LONG1
            pos += 1 + data[pos]
            stack.append(0)
        elif op in _SCALAR_ARG_BYTES:
            pos += _SCALAR_ARG_BYTES[op]
            stack.append(0)
        elif op == 0x7D or op == 0x5D:  # EMPTY_DICT, EMPTY_LIST
            stack.append(_Built())
        elif op == 0x75 or op == 0x73:  # SETITEMS, SETITEM
            m = marks.pop() if op == 0x75 else len(stack) - 2
            items = stack[m:]
            del stack[m:]
            d = stack[-1]
            if d.kind is None:
                d.kind = _dict_kind({_text(k) for k in items[0::2]})
                if d.kind == "entry":
                    c["events"] += 1  # torch 2.0 entries may have no frames
            kind = d.kind
            for j in range(0, len(items), 2):
                k, v = items[j], items[j + 1]
                key = _text(k)
                c["key reads" if type(k) is _Read else "key strings"] += 1
                if type(v) is str or (type(v) is _Read and type(v.obj) is str):
                    role = key if kind == "frame" else kind
                    c[role + (" reads" if type(v) is _Read else " strings")] += 1
                if key == "frames" and kind in ("entry", "segment", "block"):
                    where = "trace" if kind == "entry" else "segment"
                    if type(v) is _Read:
                        c[where + " lists read"] += 1
                        n = v.obj.n if type(v.obj) is _Built else 0
                    else:
                        c[where + " lists built"] += 1
                        n = v.n
                        if v.elems is not None:
                            sequences.add(tuple(v.elems))
                            v.elems = None
                            c["frame refs"] += v.n
                            c["frame dicts built"] += v.fresh
                            c["frame dict reads short"] += v.short
                        else:
                            sequences.add(())
                    if kind == "entry":
                        c["event frames"] += n
        elif op == 0x65 or op == 0x61:  # APPENDS, APPEND
            m = marks.pop() if op == 0x65 else len(stack) - 1
            items = stack[m:]
            del stack[m:]
            lst = stack[-1]
            if lst.elems is None and lst.n == 0:
                lst.elems = []
            lst.n += len(items)
            elems = lst.elems
            for x in items:
                if type(x) is _Read:
                    if x.idx < 256:
                        lst.short += 1
                    if elems is not None:
                        elems.append(x.idx)
                else:
                    lst.fresh += 1
                    if elems is not None:
                        elems.append(x.idx if type(x) is _Built else None)
        elif op == 0x8C or op == 0x58 or op == 0x8D:  # SHORT_BINUNICODE, BINUNICODE, BINUNICODE8
            if op == 0x8C:
                n, pos = data[pos], pos + 1
            elif op == 0x58:
                n, pos = unpack_i(data, pos)[0], pos + 4
            else:
                n, pos = unpack_q(data, pos)[0], pos + 8
            s = data[pos:pos + n].decode("utf-8", "surrogatepass")
            pos += n
            c["string bytes"] += n
            if len(marks) == 1 and marks[0] == 1 and len(stack) % 2 == 1:
                top_keys.append((pos - n - (2 if op == 0x8C else 5 if op == 0x58 else 9), s))
            stack.append(s)
        elif op == 0x86 or op == 0x85 or op == 0x87:  # TUPLE2, TUPLE1, TUPLE3
            del stack[len(stack) - (op - 0x84):]
            stack.append(_Built())
        elif op == 0x95:  # FRAME
            pos += 8
        elif op == 0x80:  # PROTO
            pos += 1
        elif op == 0x2E:  # STOP
            break
        elif op == 0x29:  # EMPTY_TUPLE
            stack.append(_Built())
        elif op == 0x74:  # TUPLE
            del stack[marks.pop():]
            stack.append(_Built())
        elif op == 0x71 or op == 0x72:  # BINPUT, LONG_BINPUT
            i = data[pos] if op == 0x71 else unpack_i(data, pos)[0]
            pos += 1 if op == 0x71 else 4
            while len(memo) <= i:
                memo.append(None)
            memo[i] = stack[-1]
        elif op == 0x8B:  # LONG4
            pos += 4 + unpack_i(data, pos)[0]
            stack.append(0)
        else:
            name = pickletools.code2op[chr(op)].name if chr(op) in pickletools.code2op else hex(op)
            raise ValueError("figures: opcode %s at offset %d is not plain data" % (name, pos - 1))
    ops = collections.Counter({pickletools.code2op[chr(op)].name: n for op, n in enumerate(opcount) if n})
    c["memo writes"] = ops["MEMOIZE"] + ops["BINPUT"] + ops["LONG_BINPUT"]
    c["memo reads"] = ops["BINGET"] + ops["LONG_BINGET"]
    c["distinct sequences"] = len(sequences)
    return ops, c, top_keys


def _ratio(a, b):
    return a / b if b else None


def figures(path):
    """The shape figures of one file: name -> value, in print order, and the opcode shares.

    Every figure is a ratio, so a 3 MiB capture and a 1 GiB one compare directly."""
    with open(path, "rb") as f:
        data = f.read()
    ops, c, top_keys = walk(data)
    events = c["events"]
    trace_bytes = 0
    for j, (offset, key) in enumerate(top_keys):
        if key == "device_traces":
            nxt = top_keys[j + 1][0] if j + 1 < len(top_keys) else len(data)
            trace_bytes = nxt - offset
    segment_bytes = next((o for o, k in top_keys if k == "device_traces"), len(data))
    frame_dict_reads = c["frame refs"] - c["frame dicts built"]
    trace_lists = c["trace lists built"] + c["trace lists read"]
    segment_lists = c["segment lists built"] + c["segment lists read"]
    built_lists = c["trace lists built"] + c["segment lists built"]
    names = c["name strings"] + c["name reads"]
    filenames = c["filename strings"] + c["filename reads"]
    fig = collections.OrderedDict()
    fig["bytes per trace event (file bytes / events)"] = _ratio(len(data), events)
    fig["trace bytes per trace event"] = _ratio(trace_bytes, events)
    fig["segments section share of the file"] = _ratio(segment_bytes, len(data))
    fig["frames per event"] = _ratio(c["event frames"], events)
    fig["memo reads per memo write"] = _ratio(c["memo reads"], c["memo writes"])
    fig["memo reads per frame"] = _ratio(c["memo reads"], c["event frames"])
    fig["trace frame lists read from the memo"] = _ratio(c["trace lists read"], trace_lists)
    fig["segment/block frame lists read from the memo"] = _ratio(c["segment lists read"], segment_lists)
    fig["frame refs per distinct frame dict"] = _ratio(c["frame refs"], c["frame dicts built"])
    fig["frame dict reads by BINGET (memo id < 256)"] = _ratio(c["frame dict reads short"], frame_dict_reads)
    fig["built frame lists per distinct memo-id sequence"] = _ratio(built_lists, c["distinct sequences"])
    fig["frame names read from the memo"] = _ratio(c["name reads"], names)
    fig["frame filenames read from the memo"] = _ratio(c["filename reads"], filenames)
    fig["new strings per new frame dict"] = _ratio(c["name strings"] + c["filename strings"], c["frame dicts built"])
    fig["string bytes per trace event"] = _ratio(c["string bytes"], events)
    fig["dict key reads per event"] = _ratio(c["key reads"], events)
    fig["action strings read from the memo"] = _ratio(c["entry reads"], c["entry reads"] + c["entry strings"])
    total = sum(ops.values())
    shares = {name: n / total for name, n in ops.items()}
    counts = {"file bytes": len(data), "events": events, "frame dicts": c["frame dicts built"],
              "distinct sequences": c["distinct sequences"], "built frame lists": built_lists,
              "key strings": c["key strings"]}
    return fig, shares, counts


MINOR_OPCODE_SHARE = 0.01  # opcodes under this share in the reference are compared as one sum
TOLERANCE = 0.10
PERCENT_FIGURES = ("share", "read from the memo", "BINGET")  # figures printed as percentages


def compare(paths, out=sys.stdout):
    """Print every figure of every file side by side; files after the first are marked by
    whether each figure is within 10% of the first file's (the real reference capture)."""
    results = [figures(p) for p in paths]
    ref_fig, ref_shares, _ = results[0]
    major = sorted((n for n, s in ref_shares.items() if s >= MINOR_OPCODE_SHARE), key=lambda n: -ref_shares[n])
    rows = []
    for name in ref_fig:
        rows.append((name, [r[0][name] for r in results], any(w in name for w in PERCENT_FIGURES)))
    for op in major:
        rows.append(("opcode share " + op, [r[1].get(op, 0.0) for r in results], True))
    rows.append(("opcode share, all under 1% in the reference",
                 [sum(s for n, s in r[1].items() if n not in major) for r in results], True))
    width = max(len(r[0]) for r in rows)
    col = 24
    heads = [os.path.basename(p)[:col] for p in paths]
    print("%-*s  %s" % (width, "figure (first file is the reference)",
                        "  ".join("%-*s" % (col, h) for h in heads)), file=out)
    misses = [0] * len(paths)
    for name, values, percent in rows:
        cells = []
        ref = values[0]
        for j, v in enumerate(values):
            text = "n/a" if v is None else ("%.2f%%" % (100 * v) if percent else "%.2f" % v)
            if j and v is not None and ref is not None:
                dev = (v - ref) / ref if ref else (0.0 if v == 0 else float("inf"))
                ok = abs(dev) <= TOLERANCE
                misses[j] += not ok
                text += " %+.1f%% %s" % (100 * dev, "ok" if ok else "OFF") if ref else (" ok" if ok else " OFF")
            elif j:
                misses[j] += 1
            cells.append("%-*s" % (col, text))
        print("%-*s  %s" % (width, name, "  ".join(cells)), file=out)
    for j in range(1, len(paths)):
        print("%s: %d of %d figures within %d%% of %s" % (heads[j], len(rows) - misses[j], len(rows),
                                                          round(100 * TOLERANCE), heads[0]), file=out)
    for p, (_, _, counts) in zip(paths, results):
        print("%s: %s" % (os.path.basename(p), ", ".join("%s %d" % kv for kv in counts.items())), file=out)
    return max(misses[1:], default=0) == 0


def read_expected(path):
    """A table of expected figures: one `figure<TAB>value` per line, the value as --figures
    prints it ("169.1" or "38.8%"); blank lines and lines starting with # are skipped."""
    table = collections.OrderedDict()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            name, sep, value = line.partition("\t")
            if not sep:
                sys.exit("%s:%d: expected `figure<TAB>value`" % (path, n))
            value = value.strip()
            try:
                table[name.strip()] = float(value[:-1]) / 100 if value.endswith("%") else float(value)
            except ValueError:
                sys.exit("%s:%d: %r is not a number (or a percentage)" % (path, n, value))
    return table


def compare_expected(table_path, paths, out=sys.stdout):
    """Each figure of the table beside each file's, marked by whether it is within 10% of the
    table's: for a capture known by its figures only (issue 24's "missed" shape)."""
    table = read_expected(table_path)
    results = [figures(p) for p in paths]
    unknown = [n for n in table if not n.startswith("opcode share ") and n not in results[0][0]]
    if unknown:
        sys.exit("%s: no figure named %s" % (table_path, ", ".join(map(repr, unknown))))
    col = 24
    width = max(len(n) for n in table)
    print("%-*s  %-*s  %s" % (width, "figure (expected: %s)" % os.path.basename(table_path)[:col], col, "expected",
                              "  ".join("%-*s" % (col, os.path.basename(p)[:col]) for p in paths)), file=out)
    misses = [0] * len(paths)
    for name, want in table.items():
        percent = any(w in name for w in PERCENT_FIGURES)
        show = (lambda v: "%.2f%%" % (100 * v)) if percent else (lambda v: "%.2f" % v)
        cells = []
        for j, (fig, shares, _) in enumerate(results):
            if name.startswith("opcode share "):
                v = shares.get(name[len("opcode share "):], 0.0)
            else:
                v = fig[name]
            if v is None or not want:
                ok = v == want
                text = ("n/a" if v is None else show(v)) + (" ok" if ok else " OFF")
            else:
                dev = (v - want) / want
                ok = abs(dev) <= TOLERANCE
                text = "%s %+.1f%% %s" % (show(v), 100 * dev, "ok" if ok else "OFF")
            misses[j] += not ok
            cells.append("%-*s" % (col, text))
        print("%-*s  %-*s  %s" % (width, name, col, show(want), "  ".join(cells)), file=out)
    for p, m, (_, _, counts) in zip(paths, misses, results):
        print("%s: %d of %d figures within %d%% of the table; %s" % (
            os.path.basename(p), len(table) - m, len(table), round(100 * TOLERANCE),
            ", ".join("%s %d" % kv for kv in counts.items())), file=out)
    return max(misses, default=0) == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int)
    ap.add_argument("--consistent", action="store_true",
                    help="each copy but the first allocates the blocks it frees unseen, each but the last "
                         "frees the blocks and segments it leaves")
    ap.add_argument("--figures", action="store_true",
                    help="print the shape figures of FILE... side by side, each file after the first "
                         "marked by whether it is within 10%% of the first")
    ap.add_argument("--strict", action="store_true",
                    help="with --figures: exit 1 unless every figure of every file is within 10%% of the first's")
    ap.add_argument("--expect", metavar="TABLE",
                    help="with --figures: compare every FILE with the figures in TABLE (lines "
                         "`figure<TAB>value`, as --figures prints them) instead of with the first file")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.figures:
        met = compare_expected(a.expect, a.files) if a.expect else compare(a.files)
        sys.exit(0 if met or not a.strict else 1)
    if a.mib is None or len(a.files) != 2:
        sys.exit("usage: scale_real_snapshot.py --mib N [--consistent] SOURCE OUTPUT | "
                 "--figures [--expect TABLE] FILE...")
    scale(a.files[0], a.mib, a.files[1], a.consistent)


if __name__ == "__main__":
    main()
