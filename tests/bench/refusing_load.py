#!/usr/bin/env python3
"""The Python reader people use today, made safe: pickle.load through an Unpickler that
refuses every global. Prints the number of trace entries of device 0, so the work is done."""
import pickle
import sys


class Refusing(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("refused global %s.%s" % (module, name))


with open(sys.argv[1], "rb") as f:
    snap = Refusing(f).load()
print(len(snap["device_traces"][0]))
