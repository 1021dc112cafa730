#!/usr/bin/env python3
"""Write a large PyTorch CUDA memory snapshot pickle shaped like a real capture, for benchmarking.

The output is byte-for-byte what CPython's ``pickle.dump(obj, f, protocol=4)``
(the C pickler, as used by ``torch.cuda.memory._dump_snapshot``) would write
for the object graph described below -- but it is streamed, so a 1 GiB file is
produced without ever building the multi-GB Python object in memory.

Object graph (torch 2.3+ shape, see docs/torch-formats.md section 2), keys in torch's order:

    {"segments": [...], "device_traces": [[...]],
     "allocator_settings": {...}, "external_annotations": [...]}

Calibrated against the real capture ../shared/real/snapshots/nothanmin-a2_train_step.pickle
(``scale_real_snapshot.py --figures REAL GENERATED`` prints both side by side): its opcode
mix, bytes and frames per trace event, and its memo sharing, per trace event, so that a big
file is that capture's shape at a larger scale:
  * torch's py_symbolize makes one frame dict per distinct code location and, per dict,
    new str objects for name and filename (only "" is shared: CPython's empty-string
    singleton). Dicts are shared by identity between stacks; strings never are.
  * one new list per recorded context (CapturedTraceback), holding shared frame dicts, so
    stacks repeat as lists built again from the same memo ids. torch shares one list where
    it shares the context: a free_requested entry and its free_completed, an alloc and
    the segment_alloc it caused, a live block and its alloc, a segment and the alloc that
    created it. Blocks and segments from before history recording share one empty list.
  * the program grows in phases of PHASE_EVENTS trace events; each phase brings new code
    locations (op dispatch chains, Python call sites) and new stacks, at the reference's
    rate of new frame dicts per frame reference and new stacks per frame list. The
    allocator prefix, the interpreter glue and the process and autograd-thread tails are
    shared by all phases, as in one process.
  * the segments section holds blocks from before the trace (model state, part of it
    allocated before recording started) and the working set still live at the end, in
    the reference's proportion to the trace.
Addresses are >= 2**40 (6-byte LONG1), every event is on stream 0 and each
free_completed follows its free_requested, as in the reference.

Usage: make_big_snapshot.py [--mib N] [--seed S] [--check] OUTPUT
``--check`` writes the same graph with pickle.dumps for small sizes and
compares the bytes (self-test of the streaming writer).
"""

import argparse
import array
import os
import random
import struct
import sys
import time

# ---------------------------------------------------------------- pickle ops
PROTO, FRAME, STOP = b"\x80", b"\x95", b"."
EMPTY_DICT, EMPTY_LIST, MARK = b"}", b"]", b"("
SETITEM, SETITEMS, APPEND, APPENDS = b"s", b"u", b"a", b"e"
MEMOIZE, BINGET, LONG_BINGET = b"\x94", b"h", b"j"
TUPLE2, NEWTRUE, NEWFALSE = b"\x86", b"\x88", b"\x89"
FRAME_TARGET = 64 * 1024  # CPython _pickle.c FRAME_SIZE_TARGET
FRAME_MIN = 4             # frames shorter than this are not framed
BATCH = 1000

_pack_Q = struct.Struct("<Q").pack
_pack_I = struct.Struct("<I").pack
_pack_H = struct.Struct("<H").pack
_pack_i = struct.Struct("<i").pack
_pack_d = struct.Struct(">d").pack


def enc_int(x):
    if 0 <= x <= 0xFF:
        return b"K" + bytes((x,))
    if 0 <= x <= 0xFFFF:
        return b"M" + _pack_H(x)
    if -0x80000000 <= x <= 0x7FFFFFFF:
        return b"J" + _pack_i(x)
    n = (x.bit_length() >> 3) + 1
    r = x.to_bytes(n, "little", signed=True)
    if x < 0 and n > 1 and r[-1] == 0xFF and (r[-2] & 0x80):
        r = r[:-1]
    return b"\x8a" + bytes((len(r),)) + r


def enc_get(i):
    return BINGET + bytes((i,)) if i < 256 else LONG_BINGET + _pack_I(i)


class Writer:
    """Streaming protocol-4 pickler mimicking CPython's C pickler.

    Framing rule (verified against pickle.dumps): before every save() the
    current frame is committed if it holds >= 64 KiB.  The memo is keyed by
    object identity like CPython's; every str/dict/list/tuple is memoized.
    """

    def __init__(self, f):
        self.f = f
        self.buf = bytearray()
        self.memo = {}      # id(obj) -> index
        self.keep = {}      # id -> memoized generic object, kept alive so ids stay unique
        self.n = 0          # next memo index
        self.f.write(PROTO + b"\x04")

    # -- framing
    def commit(self):
        b = self.buf
        if len(b) >= FRAME_MIN:
            self.f.write(FRAME + _pack_Q(len(b)))
        self.f.write(b)
        self.buf = bytearray()

    def mark(self):
        """Called where CPython starts a save()."""
        if len(self.buf) >= FRAME_TARGET:
            self.commit()

    def write_run(self, data, offsets):
        """Append `data`, inside which saves start at `offsets` (ascending)."""
        b = self.buf
        if len(b) + len(data) <= FRAME_TARGET:
            b += data
            return
        for o in offsets:
            if len(b) + o >= FRAME_TARGET:
                b += data[:o]
                self.commit()
                self.buf += data[o:]
                return
        b += data

    def finish(self):
        self.buf += STOP
        self.commit()

    # -- generic save for ordinary Python objects
    def memoize(self, obj):
        self.memo[id(obj)] = self.n
        self.keep[id(obj)] = obj
        self.n += 1
        self.buf += MEMOIZE

    def forget(self, obj):
        """Drop a written object that is never written again from the memo, so that
        memory does not grow with the file (its memo index stays used)."""
        del self.memo[id(obj)]
        del self.keep[id(obj)]

    def save(self, obj):
        self.mark()
        b = self.buf
        t = type(obj)
        if t is bool:
            b += NEWTRUE if obj else NEWFALSE
            return
        if t is int:
            b += enc_int(obj)
            return
        if t is float:
            b += b"G" + _pack_d(obj)
            return
        i = self.memo.get(id(obj))
        if i is not None:
            b += enc_get(i)
            return
        if t is str:
            e = obj.encode("utf-8", "surrogatepass")
            if len(e) < 256:
                b += b"\x8c" + bytes((len(e),)) + e
            else:
                b += b"X" + _pack_I(len(e)) + e
            self.memoize(obj)
            return
        if t is tuple:
            assert len(obj) == 2
            self.save(obj[0])
            self.save(obj[1])
            self.buf += TUPLE2
            self.memoize(obj)
            return
        if t is list:
            b += EMPTY_LIST
            self.memoize(obj)
            self._batch(obj, self.save, APPEND, APPENDS)
            return
        if t is dict:
            b += EMPTY_DICT
            self.memoize(obj)
            self._batch(list(obj.items()), self._save_kv, SETITEM, SETITEMS)
            return
        raise TypeError(t)

    def _save_kv(self, kv):
        self.save(kv[0])
        self.save(kv[1])

    def _batch(self, items, fn, one, many):
        n = len(items)
        if n == 1:
            fn(items[0])
            self.buf += one
            return
        i = 0
        while i < n:
            self.buf += MARK
            for it in items[i:i + BATCH]:
                fn(it)
            self.buf += many
            i += BATCH




# ---------------------------------------------------------------- constants
# One shared str object per key name, as torch's writer does.
K = {k: k for k in ("segments", "device_traces", "allocator_settings",
                    "external_annotations", "device", "address", "total_size",
                    "allocated_size", "active_size", "requested_size", "stream",
                    "segment_type", "segment_pool_id", "is_expandable", "frames",
                    "blocks", "size", "state", "action", "addr", "time_us",
                    "name", "filename", "line")}
ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc")
A_ALLOC, A_FREQ, A_FCOMP, A_SEG = 0, 1, 2, 3
EMPTY = []            # the one empty frames list of blocks and segments from before recording
NO_CTX = 0xFFFFFFFF   # context of a block or segment allocated before recording started

BASE_ADDR = 0x7000_0000_0000   # 6-byte LONG1 like real device addresses, room for TBs of segments
SMALL_SEG = 2 << 20
LARGE_SEG = 20 << 20
T0 = 1754641328380304          # epoch microseconds

# ---------------------------------------------------------------- calibration
# Set so that `scale_real_snapshot.py --figures REAL GENERATED` puts every figure within 10%
# of the reference capture (nothanmin-a2_train_step: 19464 trace events, 3.7 MB).
BYTES_PER_EVENT = 192.6        # the reference's file bytes per trace event: sizes the trace
PHASE_EVENTS = 20000           # trace events per program phase (the reference is one phase)
OPS_PER_PHASE = 48             # new op dispatch chains per phase
FIRST_PHASE_FEWER_OPS = 8      # the first phase also brings the shared frames: fewer ops
SITES_PER_PHASE = 80           # new Python call sites per phase
ALLOC_STACKS_PER_PHASE = 136   # distinct alloc stacks per phase
FREE_STACKS_PER_PHASE = 76     # distinct free stacks per phase
INIT_STACKS_PER_PHASE = 3      # stacks of the model state allocated before the trace
BACKWARD_ALLOC_SHARE = 0.61    # allocs made on the autograd thread (short, C++-only stacks)
ENGINE_FREE_SHARE = 0.755      # frees made on the autograd thread
# blocks in the final segments, per trace event
STATE_BLOCKS_UNRECORDED = 0.017  # model state from before recording: frames = the empty list
STATE_BLOCKS_RECORDED = 0.043    # model state allocated while recording, before the trace
STATE_REALLOCATED = 0.67         # of those, the share put in segments from before recording
STATE_FIRST_STACK = 0.5          # of those, the share made by the first phase's stacks
WORKING_SET = 0.008              # blocks the trace keeps live (and still live at the end)
CACHED_SEGMENTS = 0.021          # whole segments free at the end, kept by the caching allocator
# sizes of allocations as torch records them; the share of each pickle int width is the
# reference's share among trace events (BININT1 6%, BININT2 12%, BININT 82%)
SIZES_BY_WIDTH = ((0.056, (128, 64, 192)),
                  (0.119, (4096, 5120, 3072, 1024, 2048, 512, 8192, 16384)),
                  (0.825, (5242880, 2621440, 20971520, 6553600, 26214400, 131072, 81920,
                           1310720, 3932160, 1228800, 524288, 10485760)))
# sizes of the model state's blocks, and how many of each in the reference
STATE_SIZES = ((6553600, 575), (27262976, 431), (5120, 292), (1310720, 147), (5242880, 55),
               (2621440, 52), (3932160, 21))
TIME_STEPS = (0, 0, 0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 6, 7, 7, 8, 9, 10, 11, 12, 13, 15, 21, 34, 60, 140)


def fresh(s):
    """A new str object with the text of s: torch makes a new str per frame dict. Like
    CPython, the empty string and one-character strings stay shared singletons."""
    return (s + ".")[:-1] if len(s) > 1 else s


# ---------------------------------------------------------------- code locations
PY_ROOT = "/usr/local/src/conda/python-3.12.3/"
SITE = "/root/project/.venv/lib/python3.12/site-packages/"
MODULE_PY = SITE + "torch/nn/modules/module.py"
SCRIPT = "/root/project/benchmarks/train_step.py"
ALLOC_PREFIX = (
    ("torch::unwind::unwind()", "??"),
    ("torch::CapturedTraceback::gather(bool, bool, bool)", "??"),
    ("torch::cuda::(anonymous namespace)::gather_with_cpp()", "memory_snapshot.cpp"),
    ("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc("
     "signed char, unsigned long, CUstream_st*)", "CUDACachingAllocator.cpp"),
    ("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc("
     "void**, signed char, unsigned long, CUstream_st*)", ""),
    ("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)", ""),
    ("at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*, "
     "c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)", ""),
    ("at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, "
     "c10::ScalarType, std::optional<c10::MemoryFormat>)", "??"),
    # from here on, one of the ALLOC_PATHS
    ("at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>, "
     "std::optional<c10::MemoryFormat>)", "??"),
    ("at::detail::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>, "
     "std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>, "
     "std::optional<c10::MemoryFormat>)", "??"),
)
# how an allocation gets to the allocator, after ALLOC_PREFIX[:6]: (share of alloc stacks, frames)
ALLOC_PATHS = (
    (0.57, ALLOC_PREFIX[6:] + (
        ("at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)", "??"),
        ("at::(anonymous namespace)::create_out(c10::ArrayRef<long>, c10::ArrayRef<long>, "
         "c10::TensorOptions const&)", "RegisterCUDA.cpp"))),
    (0.11, ALLOC_PREFIX[6:] + (
        ("at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>, "
         "std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>, "
         "std::optional<c10::MemoryFormat>)", "??"),)),
    (0.32, (
        ("at::TensorBase at::detail::_empty_strided_generic<c10::ArrayRef<long> >(c10::ArrayRef<long>, "
         "c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType)", ""),
        ("at::detail::empty_strided_generic(c10::ArrayRef<long>, c10::ArrayRef<long>, c10::Allocator*, "
         "c10::DispatchKeySet, c10::ScalarType)", "??"),
        ("at::detail::empty_strided_cuda(c10::ArrayRef<long>, c10::ArrayRef<long>, c10::ScalarType, "
         "std::optional<c10::Device>)", "??"),
        ("at::detail::empty_strided_cuda(c10::ArrayRef<long>, c10::ArrayRef<long>, "
         "c10::TensorOptions const&)", "??"))),
)
FREE_PREFIX = (
    ("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::free("
     "c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::Block*)", "CUDACachingAllocator.cpp"),
    ("c10::cuda::CUDACachingAllocator::Native::local_raw_delete(void*)", "CUDACachingAllocator.cpp"),
    ("c10::StorageImpl::~StorageImpl()", ""),
    ("c10::intrusive_ptr<c10::StorageImpl, c10::detail::intrusive_target_default_null_type"
     "<c10::StorageImpl> >::reset_()", ""),
    ("c10::TensorImpl::~TensorImpl()", "??"),
    ("c10::TensorImpl::~TensorImpl() [clone .localalias]", "TensorImpl.cpp"),
)
PY_FREE = (
    ("THPVariable_subclass_clear(THPVariable*)", "python_variable.cpp", 0),
    ("THPVariable_subclass_dealloc(_object*)", "??", 0),
    ("_Py_Dealloc", PY_ROOT + "Objects/object.c", 2625),
)
ENGINE_TAIL = (
    ("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, "
     "torch::autograd::Node*, torch::autograd::InputBuffer&, "
     "std::shared_ptr<torch::autograd::ReadyQueue> const&)", "??"),
    ("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)", "??"),
    ("torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)", "??"),
    ("torch::autograd::python::PythonEngine::thread_init(int, "
     "std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)", "??"),
    ("execute_native_thread_routine", "thread48.o"),
    ("pthread_condattr_setpshared", "??"),
    ("clone", "??"),
)
PROCESS_TAIL = (
    ("PyEval_EvalCode", PY_ROOT + "Python/ceval.c", 578),
    ("run_eval_code_obj", PY_ROOT + "Python/pythonrun.c", 1722),
    ("run_mod", PY_ROOT + "Python/pythonrun.c", 1743),
    ("pyrun_file", PY_ROOT + "Python/pythonrun.c", 1643),
    ("_PyRun_SimpleFileObject", PY_ROOT + "Python/pythonrun.c", 433),
    ("_PyRun_AnyFileObject", PY_ROOT + "Python/pythonrun.c", 78),
    ("pymain_run_file_obj", PY_ROOT + "Modules/main.c", 360),
    ("Py_BytesMain", PY_ROOT + "Modules/main.c", 763),
    ("__libc_init_first", "??", 0),
    ("__libc_start_main", "??", 0),
    ("_start", "??", 0),
)
OPS = ("mm", "bmm", "addmm", "add_Tensor", "mul_Tensor", "div_Tensor", "sub_Tensor", "cat",
       "softmax", "_softmax_backward_data", "gelu", "gelu_backward", "silu", "silu_backward",
       "native_layer_norm", "native_layer_norm_backward", "embedding_dense_backward", "matmul",
       "clone", "copy_", "empty_strided", "zeros_like", "ones_like", "where_self", "masked_fill_Scalar",
       "_scaled_dot_product_efficient_attention", "_efficient_attention_backward", "native_dropout",
       "_to_copy", "sum_dim_IntList", "mean_dim", "var_mean_correction", "rsqrt", "pow_Tensor_Scalar",
       "exp", "_log_softmax", "nll_loss_forward", "nll_loss_backward", "index_Tensor",
       "index_put_", "max_dim", "amax", "logsumexp", "sqrt", "addcmul_", "_foreach_mul_Scalar",
       "_foreach_add_List", "_fused_adamw_", "triu", "arange_start_step", "rotary_embedding")
SIGNATURES = (
    "at::Tensor const&, at::Tensor const&",
    "at::Tensor const&, c10::OptionalArrayRef<long>, bool, std::optional<c10::ScalarType>",
    "at::Tensor const&, c10::List<std::optional<at::Tensor> > const&",
    "at::Tensor const&, c10::Scalar const&",
    "at::Tensor const&, long, std::optional<c10::ScalarType>",
    "at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar const&, c10::Scalar const&",
    "at::Tensor const&, c10::ArrayRef<long>, std::optional<c10::ScalarType>, std::optional<c10::Layout>, "
    "std::optional<c10::Device>, std::optional<bool>",
    "at::Tensor const&, at::Tensor const&, at::Tensor const&, std::optional<at::Tensor> const&, double, bool, "
    "std::optional<double>",
    "c10::ArrayRef<at::Tensor>, c10::ArrayRef<at::Tensor>, c10::ArrayRef<at::Tensor>, c10::Scalar const&",
)
WRAP = ("c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<"
        "c10::CompileTimeFunctionPointer<at::Tensor (%s), &%s>, at::Tensor, "
        "c10::guts::typelist::typelist<%s> >, at::Tensor (%s)>::call(c10::OperatorKernel*, "
        "c10::DispatchKeySet, %s)")
PY_FILES = ("/root/project/model/attention.py", "/root/project/model/transformer.py",
            "/root/project/model/layers.py", "/root/project/model/rope.py",
            "/root/project/train/loop.py", "/root/project/train/optim.py",
            SITE + "einops/einops.py", SITE + "einops/_backends.py", SITE + "torch/_tensor.py",
            SITE + "torch/nn/functional.py", SITE + "torch/optim/adamw.py")
PY_FUNCS = ("forward", "forward", "forward", "forward", "_attention", "_mlp", "apply_rotary",
            "scaled_dot_product", "softmax", "layer_norm", "cross_entropy", "step", "_single_tensor_adamw",
            "reduce", "_apply_recipe", "rearrange", "__rdiv__", "train_step", "compute_loss", "__init__")


def camel(op):
    return "".join(p[:1].upper() + p[1:] for p in op.split("_") if p)


class Program:
    """The frame dicts and stacks (tuples of frame ids) of a program that grows in phases."""

    def __init__(self, rng):
        self.rng = rng
        self.frames = []
        self.stacks = []
        common = [self.frame(n, f) for n, f in ALLOC_PREFIX[:6]]
        shared = {}  # the generic empty_cuda frames are one set of dicts in two paths
        self.alloc_paths = [(share, common + [shared.setdefault(nf, self.frame(*nf)) for nf in frames])
                            for share, frames in ALLOC_PATHS]
        self.free_prefix = common[:3] + [self.frame(n, f) for n, f in FREE_PREFIX]
        self.py_free = [self.frame(*f) for f in PY_FREE]
        self.engine_tail = [self.frame(n, f) for n, f in ENGINE_TAIL]
        # interpreter glue: py_symbolize makes a dict per instruction address, so one
        # function appears as several dicts, some with the same text
        g = self.frame
        self.eval_frame = [g("_PyEval_EvalFrame", PY_ROOT + "Include/internal/pycore_ceval.h", 89)
                           for _ in range(2)]
        self.eval_default = [g("_PyEval_EvalFrameDefault", "/croot/python-split_1715024085344/work/"
                               "build-static/Python/bytecodes.c", line) for line in (2706, 413, 686)]
        self.cfunction_call = g("PyCFunction_Call", PY_ROOT + "Objects/call.c", 387)
        self.call_prepend = [g("_PyObject_Call_Prepend", PY_ROOT + "Objects/call.c", 508),
                             g("slot_tp_call", PY_ROOT + "Objects/typeobject.c", 8770),
                             g("_PyObject_MakeTpCall", PY_ROOT + "Objects/call.c", 240)]
        self.call_impl = g("_call_impl", MODULE_PY, 1750)
        self.wrapped_call_impl = g("_wrapped_call_impl", MODULE_PY, 1739)
        self.script = [g("run_benchmark", SCRIPT, 100), g("main", SCRIPT, 158), g("<module>", SCRIPT, 169)]
        self.process_tail = [self.frame(*f) for f in PROCESS_TAIL]
        self.phases = []   # per phase: (alloc stack ids, free stack ids, init stack ids)

    def frame(self, name, filename, line=0):
        self.frames.append({K["name"]: fresh(name), K["filename"]: fresh(filename), K["line"]: line})
        return len(self.frames) - 1

    # -- pieces of stacks, innermost frame first
    def op_chain(self, op, sig):
        """The dispatch frames of one op, and its forward and backward callers."""
        rng = self.rng
        vt = "VariableType_%d.cpp" % rng.randint(0, 4)
        kernel = "at::(anonymous namespace)::wrapper_CUDA_%s" % op
        autograd = "torch::autograd::VariableType::(anonymous namespace)::%s" % op
        names = [("at::(anonymous namespace)::structured_%s_out_functional::set_output_raw_strided(long, "
                  "c10::ArrayRef<long>, c10::ArrayRef<long>, c10::TensorOptions, c10::ArrayRef<at::Dimname>)"
                  % op, "RegisterCUDA.cpp")]
        if rng.random() < 0.5:
            names += [("at::TensorIteratorBase::allocate_or_resize_outputs()", "??"),
                      ("at::TensorIteratorBase::build(at::TensorIteratorConfig&)", "??")]
        names += [("at::meta::structured_%s::meta(%s)" % (op, sig), "??"),
                  ("%s(%s)" % (kernel, sig), "RegisterCUDA.cpp"),
                  (WRAP % (sig, kernel, sig, sig, sig), "RegisterCUDA.cpp"),
                  ("at::_ops::%s::redispatch(c10::DispatchKeySet, %s)" % (op, sig), "??"),
                  ("%s(c10::DispatchKeySet, %s)" % (autograd, sig), vt),
                  (WRAP % ("c10::DispatchKeySet, " + sig, autograd, "c10::DispatchKeySet, " + sig,
                           "c10::DispatchKeySet, " + sig, sig), vt),
                  ("at::_ops::%s::call(%s)" % (op, sig), "??")]
        # symbols without debug info: "??" from some libraries, "" from others
        dispatch = [self.frame(n, "" if f == "??" and rng.random() < 0.05 else f) for n, f in names]
        forward = [self.frame("torch::autograd::THPVariable_%s(_object*, _object*, _object*)" % op,
                              rng.choice(("python_variable_methods.cpp", "python_torch_functions_0.cpp",
                                          "python_torch_functions_2.cpp"))),
                   self.frame("method_vectorcall_VARARGS_KEYWORDS", PY_ROOT + "Objects/descrobject.c", 365)]
        backward = [self.frame("torch::autograd::generated::%sBackward0::apply(std::vector<at::Tensor, "
                               "std::allocator<at::Tensor> >&&)" % camel(op), "??"),
                    self.frame("torch::autograd::Node::operator()(std::vector<at::Tensor, "
                               "std::allocator<at::Tensor> >&&)", "")]
        return dispatch, forward, backward

    def python(self, sites):
        """Python frames from the innermost call site out to the process's entry point."""
        out = []
        for k, site in enumerate(sites):
            out.append(site)
            if k % 2 == 0:   # a module call through nn.Module.__call__
                out += [self.eval_default[k % 3], self.call_impl, self.eval_frame[0], self.cfunction_call,
                        self.wrapped_call_impl, self.eval_frame[0], self.cfunction_call]
            else:            # a call through a slot: the interpreter's own frames
                out += [self.eval_frame[1]] + self.call_prepend + [self.call_impl, self.eval_default[0],
                                                                   self.wrapped_call_impl]
        ev, call = self.eval_frame[0], self.cfunction_call
        out += [self.script[0], ev, call, self.script[1], ev, call, self.script[2], ev]
        return out + self.call_prepend + [self.eval_default[0]] + self.process_tail

    def new_phase(self, scale):
        """New code locations and the stacks that use them (and the shared ones), for a
        phase of scale * PHASE_EVENTS trace events."""
        rng = self.rng
        first = not self.phases
        # the first phase also brings the shared frames: it makes fewer of its own
        n_ops = max(4, round(OPS_PER_PHASE * scale) - (FIRST_PHASE_FEWER_OPS if first else 0))
        ops = [self.op_chain(rng.choice(OPS), rng.choice(SIGNATURES)) for _ in range(n_ops)]
        sites = [self.frame(rng.choice(PY_FUNCS), rng.choice(PY_FILES), rng.randint(20, 900))
                 for _ in range(max(4, round(SITES_PER_PHASE * scale)))]
        # frees on the autograd thread end in the engine: a few releasing frames per phase
        releases = [self.frame("torch::autograd::generated::%sBackward0::release_variables()"
                               % camel(rng.choice(OPS)), "??") for _ in range(max(1, n_ops // 4))]
        shares, paths = zip(*self.alloc_paths)
        seen = {}  # stack -> id: the stacks of a phase are distinct

        def add(make, into):
            for _ in range(1000):
                stack = tuple(make())
                if stack not in seen:
                    self.stacks.append(stack)
                    seen[stack] = len(self.stacks) - 1
                    break
            into.append(seen[stack])  # after 1000 repeats (a tiny phase) a stack repeats

        def path(lo, hi):
            return [rng.choice(sites) for _ in range(rng.randint(lo, hi))]

        def backward_alloc():
            # a backward node calls ops of its own: any op under any node
            return rng.choices(paths, shares)[0] + rng.choice(ops)[0] + rng.choice(ops)[2] + self.engine_tail

        def forward_alloc(lo=3, hi=8):
            dispatch, forward, _ = rng.choice(ops)
            return rng.choices(paths, shares)[0] + dispatch + forward + self.python(path(lo, hi))

        def engine_free():
            return self.free_prefix + [rng.choice(releases) for _ in range(rng.randint(0, 3))] + self.engine_tail

        def python_free():
            return self.free_prefix + self.py_free + self.python(path(2, 6))

        def kinds(n, share):
            """Which of n stacks are of the short kind, so that weighted by how often each
            stack is used (Zipf, see weighted_cum) the short ones are `share` of the events."""
            cum = weighted_cum(n)
            out, got, prev = [], 0.0, 0.0
            for c in cum:
                short = got + (c - prev) * (1 - share) <= share * c
                got += (c - prev) if short else 0.0
                prev = c
                out.append(short)
            return out

        alloc, free, init = [], [], []
        if first:
            # the first stack written gets the short memo ids (BINGET): in the reference that
            # is a backward allocation, C++ frames only, of an op of its own (so that how often
            # its frames are read does not depend on the file's size)
            dispatch, _, backward = self.op_chain("bmm", SIGNATURES[0])
            add(lambda: paths[0] + dispatch + backward + self.engine_tail, init)
        while len(init) < INIT_STACKS_PER_PHASE:
            add(backward_alloc if len(init) % 2 else lambda: forward_alloc(1, 1), init)
        for short in kinds(max(4, round(ALLOC_STACKS_PER_PHASE * scale)), BACKWARD_ALLOC_SHARE):
            add(backward_alloc if short else forward_alloc, alloc)
        for short in kinds(max(4, round(FREE_STACKS_PER_PHASE * scale)), ENGINE_FREE_SHARE):
            add(engine_free if short else python_free, free)
        self.phases.append((alloc, free, init))


# ---------------------------------------------------------------- simulation
def weighted_cum(n, skew=0.8):
    """Cumulative Zipf-like weights: a few stacks are most of the events, as in real traces."""
    out, s = [], 0.0
    for i in range(n):
        s += 1.0 / (i + 1) ** skew
        out.append(s)
    return out


def bisect(a, x):
    lo, hi = 0, len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


class Sim:
    """A slot-based caching-allocator model producing a consistent trace (all on stream 0)."""

    def __init__(self, rng, program):
        self.rng = rng
        self.program = program
        # trace, columnar
        self.act = bytearray()
        self.addr = array.array("Q")
        self.size = array.array("Q")
        self.time = array.array("Q")
        self.ctx = array.array("I")
        # contexts: one per recorded CapturedTraceback, i.e. one list object
        self.ctx_stack = array.array("I")
        self.ctx_refs = array.array("I")
        # allocator state
        self.segments = []       # [base, segsize, slot, nslots, ctx]
        self.free_slots = {}     # slot -> [addr...]
        self.next_addr = BASE_ADDR
        self.state = []          # blocks live for the whole run: [addr, slot, size, ctx]
        self.live = []           # the working set: [addr, slot, size, ctx]
        self.t = T0
        self.annotations = []    # (stage, name, time_us)
        self.stack_size = {}     # stack id -> size torch records for its allocations
        self.recording = False
        self.tracing = False

    def new_ctx(self, stack):
        self.ctx_stack.append(stack)
        self.ctx_refs.append(0)
        return len(self.ctx_stack) - 1

    def emit(self, action, addr, size, ctx):
        self.t += self.rng.choice(TIME_STEPS)
        self.act.append(action)
        self.addr.append(addr)
        self.size.append(size)
        self.time.append(self.t)
        self.ctx.append(ctx)
        self.ctx_refs[ctx] += 1

    def assign_sizes(self, stacks, cum):
        """Sizes per stack such that, weighted by how often each stack allocates, the
        pickle int widths come out in the reference's shares."""
        rng = self.rng
        got = [0.0] * len(SIZES_BY_WIDTH)
        total = 0.0
        prev = 0.0
        for sid, c in zip(stacks, cum):
            w = c - prev
            prev = c
            deficit = [share * (total + w) - g for (share, _), g in zip(SIZES_BY_WIDTH, got)]
            k = deficit.index(max(deficit))
            got[k] += w
            total += w
            self.stack_size[sid] = rng.choice(SIZES_BY_WIDTH[k][1])

    def new_segment(self, slot, ctx):
        if slot <= (1 << 20):
            segsize = SMALL_SEG
        elif slot < (10 << 20):
            segsize = LARGE_SEG
        else:
            segsize = (slot + (2 << 20) - 1) // (2 << 20) * (2 << 20)
        base = self.next_addr
        self.next_addr += segsize + (2 << 20) * self.rng.randint(0, 3)
        nslots = segsize // slot
        self.segments.append([base, segsize, slot, nslots, ctx])
        if self.tracing:
            self.emit(A_SEG, base, segsize, ctx)
        fl = self.free_slots.setdefault(slot, [])
        fl.extend(base + slot * i for i in range(nslots - 1, -1, -1))

    def alloc(self, stack, size):
        slot = max(512, (size + 511) // 512 * 512)
        ctx = self.new_ctx(stack) if self.recording else NO_CTX
        fl = self.free_slots.get(slot)
        if not fl:
            self.new_segment(slot, ctx)
            fl = self.free_slots[slot]
        addr = fl.pop()
        if self.tracing:
            self.emit(A_ALLOC, addr, size, ctx)
        return [addr, slot, size, ctx]

    def free(self, i, stack):
        live = self.live
        blk = live[i]
        live[i] = live[-1]
        live.pop()
        if self.tracing:
            ctx = self.new_ctx(stack)
            self.emit(A_FREQ, blk[0], blk[2], ctx)
            self.emit(A_FCOMP, blk[0], blk[2], ctx)
        self.free_slots[blk[1]].append(blk[0])

    def churn(self, alloc_stacks, alloc_cum, free_stacks, free_cum, target, steps=None, events=None):
        """Allocate and free around a working set of `target` blocks."""
        rng = self.rng
        live = self.live
        step = 0
        while (steps is not None and step < steps) or (events is not None and len(self.act) < events):
            step += 1
            pa = 0.6 if len(live) < target else 0.4
            if not live or rng.random() < pa:
                sid = alloc_stacks[bisect(alloc_cum, rng.random() * alloc_cum[-1])]
                live.append(self.alloc(sid, self.stack_size[sid]))
            else:
                fid = free_stacks[bisect(free_cum, rng.random() * free_cum[-1])] if free_stacks else 0
                self.free(rng.randrange(len(live)), fid)

    def run(self, events):
        """The whole capture: model state, warm-up, then `events` trace events in phases."""
        rng, program = self.rng, self.program
        n_phases = max(1, round(events / PHASE_EVENTS))
        for _ in range(n_phases):
            program.new_phase(events / (n_phases * PHASE_EVENTS))
        cums = []
        for alloc, free, init in program.phases:
            cums.append((weighted_cum(len(alloc)), weighted_cum(len(free))))
            self.assign_sizes(alloc, cums[-1][0])
        # Model state. The first blocks written (lowest addresses: allocated first) are
        # recorded with the first phase's first stack; then come segments of state from
        # before recording, one block each, whose empty lists use up the rest of the one-byte
        # memo ids, so that only that stack's frames are read with BINGET, as in the reference.
        sizes, counts = zip(*STATE_SIZES)
        one_block = 27262976  # a segment of its own
        self.recording = True
        sid = program.phases[0][2][0]
        for _ in range(4):
            self.state.append(self.alloc(sid, one_block))
        self.recording = False
        n_unrecorded = int(STATE_BLOCKS_UNRECORDED * events)
        for i in range(n_unrecorded):
            # 64 segments of 4 memo ids each (segment, pool id, blocks, block) pass id 256
            self.state.append(self.alloc(None, one_block if i < 64 else rng.choices(sizes, counts)[0]))
        # segments the caching allocator keeps after their blocks are freed
        for blk in [self.alloc(None, 20 << 20) for _ in range(int(CACHED_SEGMENTS * events))]:
            self.free_slots[blk[1]].append(blk[0])
        # while recording, the program goes through its phases, replacing part of the state
        # in place (segments from before recording, blocks now with frames) and allocating
        # the rest anew, all before the trace window: those frames are in the segments only
        n_recorded = int(STATE_BLOCKS_RECORDED * events)
        n_replaced = int(n_recorded * STATE_REALLOCATED)
        replaced = [self.alloc(None, size) for size in rng.choices(sizes, counts, k=n_replaced)]
        self.recording = True
        for i in range(n_recorded):
            # like optimizer state, much of it is made by the same few stacks whatever the
            # phase, half of that by the very first stack
            if rng.random() < STATE_FIRST_STACK:
                init = program.phases[0][2]
                sid = init[0] if rng.random() < 0.5 else rng.choice(init)
            else:
                sid = rng.choice(program.phases[i * n_phases // n_recorded][2])
            if i < n_replaced:
                replaced[i][3] = self.new_ctx(sid)
                self.state.append(replaced[i])
            else:
                self.state.append(self.alloc(sid, rng.choices(sizes, counts)[0]))
        # warm-up steps before recording: the working set's segments exist before the trace
        target = max(50, int(WORKING_SET * events))
        alloc, free, _ = program.phases[0]
        self.churn(alloc, cums[0][0], free, cums[0][1], target, steps=4 * target)
        self.recording = self.tracing = True
        for p, (alloc, free, _) in enumerate(program.phases):
            end = events * (p + 1) // n_phases
            start_t = self.t
            self.churn(alloc, cums[p][0], free, cums[p][1], target, events=end)
            # the optimizer's record_function ranges, as torch's snapshot keeps them
            span = self.t - start_t
            for frac, name in ((0.10, "Optimizer.zero_grad#AdamW.zero_grad"),
                               (0.80, "Optimizer.step#AdamW.step")):
                t = start_t + int(span * frac)
                self.annotations += [("START", name, t), ("END", name, t + 1000 + int(span * 0.05))]

    def final_segments(self):
        """Yield the segments with their blocks, in address order, frames given as context
        ids (resolved by the writer). A context is shared only within one segment (a block
        and the segment its allocation created) and with the trace."""
        by_addr = {blk[0]: blk for blk in self.state}
        by_addr.update((blk[0], blk) for blk in self.live)
        for base, segsize, slot, nslots, sctx in sorted(self.segments):
            blocks = []
            free_run = 0
            free_start = base
            alloc_sz = req_sz = 0
            for i in range(nslots + 1):
                a = base + slot * i
                hit = by_addr.get(a) if i < nslots else None
                if hit is None:
                    if not free_run:
                        free_start = a
                    free_run += slot if i < nslots else segsize - slot * nslots
                    if i < nslots:
                        continue
                if free_run:
                    blocks.append((free_start, free_run, free_run, "inactive", NO_CTX))
                    free_run = 0
                if hit is not None:
                    blocks.append((a, slot, hit[2], "active_allocated", hit[3]))
                    alloc_sz += slot
                    req_sz += hit[2]
            yield (base, segsize, alloc_sz, alloc_sz, req_sz,
                   "small" if segsize == SMALL_SEG else "large", sctx, blocks)


# ---------------------------------------------------------------- writing
ALLOCATOR_SETTINGS = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                      "garbage_collection_threshold": 0.0, "expandable_segments": False,
                      "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
                      "pinned_use_cuda_host_register": False,
                      "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}}


def pool_id():
    return tuple([0, 0])  # a new tuple per segment, as torch builds it (a constant would be memo-shared)


def annotation_objects(sim):
    # torch makes these dicts in Python, with new str objects for "stage" and "name"
    return [{fresh("stage"): fresh(stage), fresh("name"): fresh(name), K["device"]: 0, K["time_us"]: t}
            for stage, name, t in sim.annotations]


def segment_object(seg, ctx_list):
    base, segsize, alloc_sz, active_sz, req_sz, stype, sctx, blocks = seg
    bl = [{K["address"]: a, K["size"]: sz, K["requested_size"]: req, K["state"]: state,
           K["frames"]: ctx_list(bctx)} for a, sz, req, state, bctx in blocks]
    return {K["device"]: 0, K["address"]: base, K["total_size"]: segsize,
            K["allocated_size"]: alloc_sz, K["active_size"]: active_sz,
            K["requested_size"]: req_sz, K["stream"]: 0,
            K["segment_type"]: stype, K["segment_pool_id"]: pool_id(),
            K["is_expandable"]: False, K["frames"]: ctx_list(sctx), K["blocks"]: bl}


def write_snapshot(f, program, sim, progress=None):
    w = Writer(f)
    frames, stacks = program.frames, program.stacks
    ctx_stack = sim.ctx_stack
    left = sim.ctx_refs  # per context, the trace events still to write that refer to it (used up)
    ctx_memo = {}        # context -> memo index of its list, while the trace still refers to it

    # top-level dict, written by hand so that segments and trace can be streamed
    w.mark()
    w.buf += EMPTY_DICT
    top_memo = w.n
    w.n += 1
    w.buf += MEMOIZE + MARK
    w.save(K["segments"])
    # segments = [...], saved one at a time, as save(list) would
    w.mark()
    w.buf += EMPTY_LIST + MEMOIZE
    w.n += 1
    n_segs = len(sim.segments)
    for i, seg in enumerate(sim.final_segments()):
        if n_segs > 1 and i % BATCH == 0:
            if i:
                w.buf += APPENDS
            w.buf += MARK
        lists = {}  # this segment's lists: one per context

        def ctx_list(ctx):
            if ctx == NO_CTX:
                return EMPTY
            if ctx not in lists:
                lists[ctx] = [frames[k] for k in stacks[ctx_stack[ctx]]]
            return lists[ctx]
        obj = segment_object(seg, ctx_list)
        w.save(obj)
        # what the rest of the file refers to again is the frames, strings, the empty list
        # and the lists of contexts still in the trace (by memo index): forget the rest
        for ctx, lst in lists.items():
            if left[ctx]:
                ctx_memo[ctx] = w.memo[id(lst)]
            w.forget(lst)
        for b in obj[K["blocks"]]:
            w.forget(b)
        w.forget(obj[K["blocks"]])
        w.forget(obj[K["segment_pool_id"]])
        w.forget(obj)
    if n_segs:
        w.buf += APPENDS if n_segs > 1 else APPEND

    # device_traces = [trace0]
    w.save(K["device_traces"])
    w.mark()
    w.buf += EMPTY_LIST + MEMOIZE
    w.n += 1
    w.mark()  # save(trace0)
    w.buf += EMPTY_LIST + MEMOIZE
    w.n += 1

    memo = w.memo
    stack_cache = {}  # stack id -> (bytes of the list built from memoized frames, save offsets)
    act_objs = ACTIONS

    def key(k):
        return enc_get(memo[id(K[k])]) if id(K[k]) in memo else None

    fast_keys = None
    n_entries = len(sim.act)
    acts, addrs, sizes, times, ctxs = sim.act, sim.addr, sim.size, sim.time, sim.ctx
    stream_bytes = enc_int(0)
    t_last = time.time()
    for j in range(n_entries):
        if j % BATCH == 0:
            if j:
                w.buf += APPENDS
            w.buf += MARK
            if progress and time.time() - t_last > 5:
                t_last = time.time()
                progress(j, n_entries)
        a = acts[j]
        ctx = ctxs[j]
        left[ctx] -= 1
        more = left[ctx] > 0  # a later event reads this event's list from the memo
        sk = ctx_stack[ctx]
        mi = ctx_memo.get(ctx)
        if mi is not None and not more:
            del ctx_memo[ctx]
        cached = stack_cache.get(sk) if mi is None else True
        act_o = act_objs[a]
        if fast_keys is None and id(act_o) in memo and id(K["time_us"]) in memo:
            fast_keys = [key(k) for k in ("action", "addr", "size", "stream", "time_us", "frames")]
        if cached is not None and fast_keys is not None and id(act_o) in memo:
            ka, kad, ks, kst, kt, kf = fast_keys
            # saves start at: dict, key, val, key, val, ... key, list(or get), elems
            parts = [EMPTY_DICT + MEMOIZE + MARK, ka, enc_get(memo[id(act_o)]), kad, enc_int(addrs[j]),
                     ks, enc_int(sizes[j]), kst, stream_bytes, kt, enc_int(times[j]), kf]
            w.n += 1  # entry dict
            if mi is not None:
                parts.append(enc_get(mi) + SETITEMS)
                body_offs = None
            else:
                body, body_offs = cached
                if more:
                    ctx_memo[ctx] = w.n
                w.n += 1  # the list
                parts.append(body)
            data = b"".join(parts)
            if len(w.buf) + len(data) <= FRAME_TARGET:
                w.buf += data
            else:
                offs = []
                o = 0
                for p in parts[:-1]:
                    offs.append(o)
                    o += len(p)
                offs.append(o)
                if body_offs is not None:
                    offs.extend(o + x for x in body_offs)
                w.write_run(data, offs)
            continue
        # generic (slow) path: first uses of strings / frames
        st = stacks[sk]
        lst = [frames[i] for i in st] if mi is None else None  # None: the list is in the memo
        entry = {K["action"]: act_o, K["addr"]: addrs[j], K["size"]: sizes[j],
                 K["stream"]: 0, K["time_us"]: times[j], K["frames"]: lst}
        if mi is None:
            w.save(entry)
            if more:
                ctx_memo[ctx] = memo[id(lst)]
            w.forget(lst)
        else:
            # emulate save(entry) where frames value is a memo reference
            w.mark()
            w.buf += EMPTY_DICT + MEMOIZE + MARK
            w.n += 1
            memo[id(entry)] = w.n - 1
            w.keep[id(entry)] = entry
            for k, v in list(entry.items()):
                w.save(k)
                if v is None:
                    w.mark()
                    w.buf += enc_get(mi)
                else:
                    w.save(v)
            w.buf += SETITEMS
        w.forget(entry)
        if sk not in stack_cache and all(id(frames[i]) in memo for i in st):
            body = bytearray(EMPTY_LIST + MEMOIZE + MARK)
            offs = []
            for i in st:
                offs.append(len(body))
                body += enc_get(memo[id(frames[i])])
            body += APPENDS + SETITEMS
            # offsets relative to the list start; the list save itself starts at 0
            stack_cache[sk] = (bytes(body), [0] + offs)
    if n_entries:
        w.buf += APPENDS
    w.buf += APPEND  # device_traces has exactly one element
    w.save(K["allocator_settings"])
    w.save(ALLOCATOR_SETTINGS)
    w.save(K["external_annotations"])
    w.save(annotation_objects(sim))
    w.buf += SETITEMS
    w.finish()
    return top_memo


def build(mib, seed):
    rng = random.Random(seed)
    program = Program(rng)
    sim = Sim(rng, program)
    sim.run(max(100, int(mib * (1 << 20) / BYTES_PER_EVENT)))
    return program, sim


def as_objects(program, sim):
    """The same graph as real Python objects (small sizes only, for --check)."""
    frames, stacks = program.frames, program.stacks
    lists = {}

    def lst(ctx):
        if ctx == NO_CTX:
            return EMPTY
        if ctx not in lists:  # one list object per context
            lists[ctx] = [frames[i] for i in stacks[sim.ctx_stack[ctx]]]
        return lists[ctx]
    seg_objs = [segment_object(seg, lst) for seg in sim.final_segments()]
    trace = [{K["action"]: ACTIONS[sim.act[j]], K["addr"]: sim.addr[j], K["size"]: sim.size[j],
              K["stream"]: 0, K["time_us"]: sim.time[j], K["frames"]: lst(sim.ctx[j])}
             for j in range(len(sim.act))]
    return {K["segments"]: seg_objs, K["device_traces"]: [trace],
            K["allocator_settings"]: ALLOCATOR_SETTINGS,
            K["external_annotations"]: annotation_objects(sim)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("output")
    ap.add_argument("--mib", type=float, default=1024)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--check", action="store_true",
                    help="also build the graph as Python objects and compare with pickle.dumps (small sizes)")
    args = ap.parse_args(argv)
    t0 = time.time()
    program, sim = build(args.mib, args.seed)
    t1 = time.time()
    print("simulated %d trace entries, %d segments, %d frames, %d stacks, %d phases in %.1fs"
          % (len(sim.act), len(sim.segments), len(program.frames), len(program.stacks), len(program.phases),
             t1 - t0), file=sys.stderr)

    def progress(j, n):
        print("  writing %d/%d entries" % (j, n), file=sys.stderr)
    tmp = args.output + ".tmp"
    with open(tmp, "wb", buffering=1 << 20) as f:
        write_snapshot(f, program, sim, progress)
        size = f.tell()
    os.replace(tmp, args.output)
    print("wrote %s: %d bytes (%.1f MiB) in %.1fs" % (args.output, size, size / 2**20, time.time() - t0),
          file=sys.stderr)
    if args.check:
        import pickle
        obj = as_objects(program, sim)
        ref = pickle.dumps(obj, protocol=4)
        with open(args.output, "rb") as f:
            got = f.read()
        if ref != got:
            i = next((i for i in range(min(len(ref), len(got))) if ref[i] != got[i]), min(len(ref), len(got)))
            print("CHECK FAILED: first difference at byte %d (ref %d bytes, got %d)" % (i, len(ref), len(got)),
                  file=sys.stderr)
            print(" ref:", ref[max(0, i - 40):i + 40], "\n got:", got[max(0, i - 40):i + 40], file=sys.stderr)
            return 1
        print("check: identical to pickle.dumps(obj, protocol=4)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
