#!/usr/bin/python3
"""`memsnap info --format jsonl` over many captures, one memsnap process per file on a Dask cluster.

    jsonl.py --workers 8 runs/ > records.jsonl                   # a local cluster, 8 processes
    jsonl.py --scheduler tcp://host:8786 --output records.jsonl /shared/runs/

It writes what `memsnap info --format jsonl NAME...` writes: the same lines in the same order.
The files are listed here as memsnap lists them (a named file stays; a directory stands for its
files and its subdirectories', sorted by path bytes, hidden ones left out, links to folders not
followed), then each worker runs `memsnap info --format jsonl -- PATH` on one file, with PATH
spelt as the listing spelt it and run from this working directory, so each record's `file` is
the directory run's (every other field comes from that file alone). Records are written in
file order as they arrive. The workers must see the files, and `--memsnap`, under the same
paths (a shared file system). A file a directory brought in that is not a capture (memsnap's
exit code 2) is skipped with memsnap's warning; any other failure ends the run with the first
one in file order, on one line naming the file, after every record, as memsnap does.
Standard input (`-`) is not sent to a cluster.
"""
import argparse
import contextlib
import os
import subprocess
import sys

from distributed import Client, LocalCluster

ERROR = "memsnap: error: "  # how memsnap starts the line of an error


def listing(names):
    """(path, found in a directory) for each file memsnap reads, in its order."""
    files = []
    for name in names:
        if not os.path.isdir(name):
            files.append((name, False))
            continue
        found = []

        def unlistable(e, name=name):
            sys.exit(f"jsonl.py: error: {name}: cannot list the directory: {e.strerror}")

        for top, dirs, names_here in os.walk(name, onerror=unlistable):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            paths = (os.path.join(top, n) for n in names_here if not n.startswith("."))
            found += [p for p in paths if os.path.isfile(p)]
        files += [(p, True) for p in sorted(found, key=os.fsencode)]
    if not files:
        sys.exit("jsonl.py: error: the directories named hold no files")
    return files


def info(path, memsnap, cwd):
    """On a worker: memsnap's exit code, records and standard error for one file."""
    try:
        run = subprocess.run([memsnap, "info", "--format", "jsonl", "--", path], cwd=cwd, capture_output=True)
    except OSError as e:  # no memsnap there, or no such working directory
        return None, b"", f"jsonl.py: error: {path}: cannot run {memsnap}: {e}"
    return run.returncode, run.stdout, run.stderr.decode(errors="replace")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running cluster's scheduler (tcp://host:8786)")
    where.add_argument("--workers", type=int, metavar="N", help="a local cluster of N processes, 1 thread each")
    parser.add_argument("--memsnap", default="memsnap", help="the memsnap binary on the workers (default: on PATH)")
    parser.add_argument("--output", metavar="FILE", help="where the records go (default: standard output)")
    parser.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture files and directories")
    args = parser.parse_args()
    if "-" in args.captures:
        parser.error("'-' (standard input) cannot be sent to a cluster")
    if args.workers is not None and args.workers < 1:
        parser.error("--workers: at least 1")
    files = listing(args.captures)

    output = open(args.output, "wb") if args.output else contextlib.nullcontext(sys.stdout.buffer)
    cluster = (LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
               if args.workers else contextlib.nullcontext(args.scheduler))
    warnings, failure, read = [], None, 0
    with cluster as address, Client(address) as client, output as out:
        futures = client.map(info, [path for path, _ in files], memsnap=args.memsnap, cwd=os.getcwd(), pure=False)
        for (path, in_directory), future in zip(files, futures):
            try:
                code, records, log = future.result()
            except Exception as e:  # the task itself failed (a lost worker, say)
                failure = failure or (1, f"jsonl.py: error: {path}: {type(e).__name__}: {e}")
                continue
            finally:
                future.release()
            out.write(records)
            lines = log.splitlines()
            last = lines[-1] if lines else ""
            if code == 0:
                read += 1
                warnings += lines
            elif code == 2 and in_directory and last.startswith(ERROR):
                warnings.append("memsnap: warning: skipped " + last[len(ERROR):])
            elif not failure:  # the first in file order, as memsnap reports it
                failure = (code if code and code > 0 else 1, last or f"jsonl.py: error: {path}: memsnap exited {code}")
    if failure:
        print(failure[1], file=sys.stderr)
        return failure[0]
    if read == 0:
        print(f"jsonl.py: error: {files[0][0]}: none of the files found is a capture", file=sys.stderr)
        return 2
    for line in warnings:
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
