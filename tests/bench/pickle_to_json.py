#!/usr/bin/env python3
"""A snapshot pickle written as JSON, the way users dump one: json.dump of what pickle.load
gives, through an Unpickler that refuses every global (snapshots are plain data). Streams the
text to OUTPUT (json.dump writes piece by piece), so only the object is held in memory.

    pickle_to_json.py SNAPSHOT.pickle OUTPUT.json
"""
import json
import pickle
import sys


class Refusing(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("refused global %s.%s" % (module, name))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        snap = Refusing(f).load()
    with open(sys.argv[2], "w", encoding="ascii") as out:
        json.dump(snap, out)


if __name__ == "__main__":
    main()
