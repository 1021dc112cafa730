#!/usr/bin/env python3
"""Write a large, realistic PyTorch CUDA memory snapshot pickle for benchmarking.

The output is byte-for-byte what CPython's ``pickle.dump(obj, f, protocol=4)``
(the C pickler, as used by ``torch.cuda.memory._dump_snapshot``) would write
for the object graph described below -- but it is streamed, so a 1 GiB file is
produced without ever building the multi-GB Python object in memory.

Object graph (torch 2.3+ shape, see docs/torch-formats.md section 2):

    {"segments": [...], "device_traces": [[...]],
     "allocator_settings": {...}, "external_annotations": []}

Sharing modelled after real snapshots (docs section 5.1):
  * a pool of a few thousand frame dicts (C++ frames with filename "??",
    "" or "X.cpp", Python frames with real paths), shared by identity;
  * a few thousand distinct stack contents, innermost frame first, 20-60 frames;
  * every recorded context is its OWN list object (a new list holding shared
    frame dicts), except where torch shares one CapturedTraceback:
      - a live block and the ``alloc`` trace entry that created it,
      - a ``segment_alloc`` entry, the ``alloc`` that triggered it and the
        segment dict's own ``frames``,
      - a ``free_requested`` entry and its ``free_completed`` entry;
  * inactive blocks share one empty list; key strings and action strings are
    single shared objects.
Addresses are >= 2**40 (encoded as LONG1), sizes are multiples of 512.

Usage: make_big_snapshot.py [--mib N] [--seed S] [--check] OUTPUT
``--check`` writes the same graph with pickle.dumps for small sizes and
compares the bytes (self-test of the streaming writer).
"""

import argparse
import array
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
        self.keep = []      # keeps memoized generic objects alive (ids stable)
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
        self.keep.append(obj)
        self.n += 1
        self.buf += MEMOIZE

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
# One shared str object per key / value name, as torch's writer does.
K = {k: k for k in ("segments", "device_traces", "allocator_settings",
                    "external_annotations", "device", "address", "total_size",
                    "allocated_size", "active_size", "requested_size", "stream",
                    "segment_type", "segment_pool_id", "is_expandable", "frames",
                    "blocks", "size", "state", "action", "addr", "time_us",
                    "name", "filename", "line")}
ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc")
A_ALLOC, A_FREQ, A_FCOMP, A_SEG = 0, 1, 2, 3
EMPTY = []  # the shared empty frames list of inactive blocks

BASE_ADDR = 0x7F3A00000000      # > 2**40, < 2**47: 6-byte LONG1
SMALL_SEG = 2 << 20
LARGE_SEG = 20 << 20
T0 = 1748729097138624           # epoch microseconds


def pool_id():
    z = 0
    return (z, z)  # a new tuple per segment, as torch builds it


def fresh(s):
    """A new str object with the text of s (torch makes a new str per frame)."""
    return (s + ".")[:-1] if len(s) > 1 else s


# ---------------------------------------------------------------- frames
OPS = ("mm", "bmm", "addmm", "add", "mul", "div", "sub", "cat", "stack",
       "softmax", "_softmax_backward_data", "gelu", "gelu_backward", "silu",
       "layer_norm", "native_layer_norm_backward", "embedding",
       "embedding_dense_backward", "einsum", "matmul", "linear", "clone",
       "contiguous", "copy_", "empty", "empty_strided", "zeros", "ones",
       "full", "arange", "where", "masked_fill", "scaled_dot_product_attention",
       "_efficient_attention_forward", "_flash_attention_backward", "dropout",
       "native_dropout", "transpose", "reshape", "_to_copy", "sum", "mean",
       "var_mean", "rsqrt", "pow", "exp", "log_softmax", "nll_loss_forward",
       "cross_entropy_loss", "conv2d", "convolution_backward",
       "cudnn_convolution", "max_pool2d_with_indices", "relu", "threshold_backward",
       "_fused_adam_", "_foreach_mul_", "_foreach_add_", "addcmul_", "sqrt")
PY_DIRS = ("/opt/conda/lib/python3.11/site-packages/torch/nn/modules/",
           "/opt/conda/lib/python3.11/site-packages/torch/nn/",
           "/opt/conda/lib/python3.11/site-packages/torch/",
           "/opt/conda/lib/python3.11/site-packages/torch/optim/",
           "/opt/conda/lib/python3.11/site-packages/transformers/models/llama/",
           "/opt/conda/lib/python3.11/site-packages/einops/",
           "/home/user/project/model/", "/home/user/project/train/")
PY_FILES = ("module.py", "linear.py", "functional.py", "activation.py",
            "normalization.py", "sparse.py", "container.py", "adamw.py",
            "optimizer.py", "modeling_llama.py", "einops.py", "_backends.py",
            "transformer.py", "attention.py", "mlp.py", "loop.py", "utils.py")
PY_FUNCS = ("forward", "_call_impl", "_wrapped_call_impl", "__call__", "step",
            "_single_tensor_adamw", "_multi_tensor_adamw", "adamw", "backward",
            "train_step", "train_epoch", "main", "run", "attention", "mlp",
            "rotate_half", "apply_rotary_pos_emb", "repeat_kv", "einsum",
            "linear", "dropout", "softmax", "layer_norm", "embedding",
            "compute_loss", "evaluate", "generate", "_sample", "prefill")
GLUE = ("_PyEval_EvalFrameDefault", "method_vectorcall", "_PyObject_Call_Prepend",
        "slot_tp_call", "_PyFunction_Vectorcall", "cfunction_call",
        "_PyObject_MakeTpCall")
ALLOC_PREFIX = (
    ("torch::unwind::unwind()", "??"),
    ("torch::CapturedTraceback::gather(bool, bool, bool)", "??"),
    ("torch::cuda::(anonymous namespace)::gather_with_cpp()", "memory_snapshot.cpp"),
    ("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc("
     "signed char, unsigned long, CUstream_st*)", "CUDACachingAllocator.cpp"),
    ("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc("
     "void**, signed char, unsigned long, CUstream_st*)", ""),
    ("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate("
     "unsigned long)", ""),
    ("at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, "
     "c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, "
     "std::optional<c10::MemoryFormat>)", ""),
    ("at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)", "??"),
)
FREE_PREFIX = (
    ("torch::unwind::unwind()", "??"),
    ("torch::CapturedTraceback::gather(bool, bool, bool)", "??"),
    ("torch::cuda::(anonymous namespace)::gather_with_cpp()", "memory_snapshot.cpp"),
    ("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::free("
     "c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::Block*)",
     "CUDACachingAllocator.cpp"),
    ("c10::cuda::CUDACachingAllocator::Native::local_raw_delete(void*)", "??"),
    ("c10::StorageImpl::~StorageImpl()", "??"),
    ("c10::TensorImpl::~TensorImpl()", "??"),
    ("THPVariable_subclass_dealloc(_object*)", "python_variable.cpp"),
)
TAIL = ("PyEval_EvalCode", "run_eval_code_obj", "run_mod", "pyrun_file",
        "_PyRun_SimpleFileObject", "_PyRun_AnyFileObject", "pymain_run_file_obj",
        "pymain_run_file", "Py_RunMain", "pymain_main", "Py_BytesMain",
        "__libc_init_first", "__libc_start_main", "_start")


class Pool:
    """Frame dicts and stacks (tuples of frame-dict indices)."""

    def __init__(self, rng, n_alloc_stacks=3000, n_free_stacks=1200):
        self.rng = rng
        self.frames = []
        self.last_qq = "??"
        mk = self.cpp
        self.alloc_prefix = [mk(n, f) for n, f in ALLOC_PREFIX]
        self.free_prefix = [mk(n, f) for n, f in FREE_PREFIX]
        self.tail = [mk(n, "??") for n in TAIL]
        # per-op C++ chains (6..10 frames each), 3 variants per op
        self.op_chains = []
        for op in OPS:
            for v in range(3):
                names = [
                    "at::native::%s_out_cuda_v%d(at::Tensor const&, at::Tensor const&, at::Tensor&)" % (op, v),
                    "at::(anonymous namespace)::wrapper_CUDA_%s(at::Tensor const&, at::Tensor const&)" % op,
                    "c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<"
                    "c10::CompileTimeFunctionPointer<at::Tensor (at::Tensor const&, at::Tensor const&), "
                    "&at::(anonymous namespace)::wrapper_CUDA_%s>, at::Tensor, c10::guts::typelist::typelist<"
                    "at::Tensor const&, at::Tensor const&> >, at::Tensor (at::Tensor const&, at::Tensor const&)>"
                    "::call(c10::OperatorKernel*, c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)" % op,
                    "at::_ops::%s::redispatch(c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)" % op,
                    "torch::autograd::VariableType::(anonymous namespace)::%s(c10::DispatchKeySet, "
                    "at::Tensor const&, at::Tensor const&)" % op,
                    "at::_ops::%s::call(at::Tensor const&, at::Tensor const&)" % op,
                    "torch::autograd::THPVariable_%s(_object*, _object*, _object*)" % op,
                    "torch::autograd::generated::%sBackward0::apply(std::vector<at::Tensor>&&)" % op,
                    "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, "
                    "torch::autograd::Node*, torch::autograd::InputBuffer&, "
                    "std::shared_ptr<torch::autograd::ReadyQueue> const&)",
                    "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
                ]
                k = rng.randint(6, 10)
                files = ("??", "??", "", "RegisterCUDA.cpp", "VariableType_%d.cpp" % rng.randint(0, 4),
                         "python_torch_functions_%d.cpp" % rng.randint(0, 2))
                self.op_chains.append([mk(n, rng.choice(files)) for n in names[:k]])
        # interpreter glue frames: several distinct dicts per name (one per IP)
        self.glue = [[mk(g, "??") for _ in range(6)] for g in GLUE]
        # python frames
        self.py = []
        for _ in range(900):
            path = rng.choice(PY_DIRS) + rng.choice(PY_FILES)
            self.py.append(self.pyframe(rng.choice(PY_FUNCS), path, rng.randint(10, 2500)))
        self.py_outer = [self.pyframe("<module>", "/home/user/project/train.py", 412),
                         self.pyframe("main", "/home/user/project/train.py", 377)]
        # python call paths: random walks over a shallow "call tree"
        self.paths = []
        for _ in range(1500):
            depth = rng.randint(2, 9)
            self.paths.append([rng.randrange(len(self.py)) for _ in range(depth)])
        self.alloc_stacks = [self.stack(self.alloc_prefix, True) for _ in range(n_alloc_stacks)]
        self.free_stacks = [self.stack(self.free_prefix, False) for _ in range(n_free_stacks)]

    def cpp(self, name, filename):
        if filename == "??":
            # torch reuses some "??" str objects and creates others
            if self.rng.random() < 0.5:
                self.last_qq = fresh("??")
            filename = self.last_qq
        else:
            filename = fresh(filename)
        self.frames.append({K["name"]: fresh(name), K["filename"]: filename, K["line"]: 0})
        return len(self.frames) - 1

    def pyframe(self, func, path, line):
        self.frames.append({K["name"]: fresh(func), K["filename"]: fresh(path), K["line"]: line})
        return len(self.frames) - 1

    def stack(self, prefix, with_op):
        rng = self.rng
        while True:
            s = list(prefix)
            if with_op:
                s += rng.choice(self.op_chains)
            path = rng.choice(self.paths)
            for p in path:
                s.append(self.py[p])
                for _ in range(rng.randint(1, 2)):
                    s.append(rng.choice(rng.choice(self.glue)))
            s += self.py_outer if rng.random() < 0.3 else self.tail + self.py_outer
            if 20 <= len(s) <= 60:
                return tuple(s)


# ---------------------------------------------------------------- simulation
class Sim:
    """A slot-based caching-allocator model producing a consistent trace."""

    def __init__(self, rng, pool, live_target):
        self.rng = rng
        self.pool = pool
        self.live_target = live_target
        # trace, columnar
        self.act = bytearray()
        self.addr = array.array("Q")
        self.size = array.array("Q")
        self.stream = array.array("Q")
        self.time = array.array("Q")
        self.ctx = array.array("I")
        # contexts (one per recorded CapturedTraceback -> one list object)
        self.ctx_stack = array.array("I")
        self.ctx_refs = array.array("I")
        self.ctx_isfree = bytearray()
        # allocator state
        self.segments = []       # [base, segsize, slot, nslots, stream, ctx]
        self.free_slots = {}     # (slot, stream) -> [addr...]
        self.next_addr = BASE_ADDR
        self.live = []           # [addr, size, req, stream, ctx]
        self.pending = []        # (due_step, blockrec, free_ctx)
        self.t = T0
        self.streams = (0,) * 18 + (94023311545440, 94023311551312)
        # per-stack allocation habits
        # a modest set of block sizes (torch reuses cached blocks of these)
        sizes = [512 * rng.randint(1, 64) for _ in range(25)]            # <= 32 KiB
        sizes += [512 * rng.randint(65, 2048) for _ in range(25)]        # <= 1 MiB
        sizes += [512 * rng.randint(2049, 20480) for _ in range(15)]     # <= 10 MiB
        sizes += [(2 << 20) * rng.randint(6, 32) for _ in range(5)]      # <= 64 MiB
        weights = [8.0] * 25 + [5.6] * 25 + [3.5] * 15 + [1.6] * 5
        cw = self.cum(weights)
        self.stack_size = [sizes[self.bisect(cw, rng.random() * cw[-1])] for _ in pool.alloc_stacks]
        self.stack_stream = [rng.choice(self.streams) for _ in pool.alloc_stacks]
        n = len(pool.alloc_stacks)
        self.alloc_w = self.cum([1.0 / (i + 1) ** 0.8 for i in range(n)])
        m = len(pool.free_stacks)
        self.free_w = self.cum([1.0 / (i + 1) ** 0.8 for i in range(m)])
        self.est = 0  # estimated pickle bytes of the trace

    @staticmethod
    def cum(w):
        out, s = [], 0.0
        for x in w:
            s += x
            out.append(s)
        return out

    def new_ctx(self, stack, is_free):
        self.ctx_stack.append(stack)
        self.ctx_refs.append(0)
        self.ctx_isfree.append(is_free)
        return len(self.ctx_stack) - 1

    def emit(self, action, addr, size, stream, ctx):
        self.t += self.rng.choice((0, 1, 2, 3, 14, 40, 77, 150, 900))
        self.act.append(action)
        self.addr.append(addr)
        self.size.append(size)
        self.stream.append(stream)
        self.time.append(self.t)
        self.ctx.append(ctx)
        refs = self.ctx_refs[ctx]
        self.ctx_refs[ctx] = refs + 1
        if refs:
            self.est += 58
        else:
            st = (self.pool.free_stacks if self.ctx_isfree[ctx] else self.pool.alloc_stacks)[self.ctx_stack[ctx]]
            self.est += 57 + 5 * len(st)

    def new_segment(self, slot, stream, ctx):
        if slot <= (1 << 20):
            segsize = SMALL_SEG
        elif slot < (10 << 20):
            segsize = LARGE_SEG
        else:
            segsize = (slot + (2 << 20) - 1) // (2 << 20) * (2 << 20)
        base = self.next_addr
        self.next_addr += segsize + (2 << 20) * self.rng.randint(0, 3)
        nslots = segsize // slot
        self.segments.append([base, segsize, slot, nslots, stream, ctx])
        self.emit(A_SEG, base, segsize, stream, ctx)
        fl = self.free_slots.setdefault((slot, stream), [])
        fl.extend(base + slot * i for i in range(nslots - 1, -1, -1))

    def alloc(self):
        rng = self.rng
        si = self.bisect(self.alloc_w, rng.random() * self.alloc_w[-1])
        size = self.stack_size[si]
        stream = self.stack_stream[si]
        ctx = self.new_ctx(si, 0)
        fl = self.free_slots.get((size, stream))
        if not fl:
            self.new_segment(size, stream, ctx)
            fl = self.free_slots[(size, stream)]
        addr = fl.pop()
        req = size - rng.randint(0, 511)
        self.emit(A_ALLOC, addr, size, stream, ctx)
        self.live.append([addr, size, req, stream, ctx])

    def free(self, step):
        rng = self.rng
        i = rng.randrange(len(self.live))
        live = self.live
        blk = live[i]
        live[i] = live[-1]
        live.pop()
        fi = self.bisect(self.free_w, rng.random() * self.free_w[-1])
        fctx = self.new_ctx(fi, 1)
        self.emit(A_FREQ, blk[0], blk[1], blk[3], fctx)
        if blk[3] != 0 and rng.random() < 0.5:
            self.pending.append((step + rng.randint(1, 40), blk, fctx))
        else:
            self.complete(blk, fctx)

    def complete(self, blk, fctx):
        self.emit(A_FCOMP, blk[0], blk[1], blk[3], fctx)
        self.free_slots[(blk[1], blk[3])].append(blk[0])

    @staticmethod
    def bisect(a, x):
        lo, hi = 0, len(a)
        while lo < hi:
            mid = (lo + hi) // 2
            if a[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def run(self, target_bytes):
        rng = self.rng
        step = 0
        while self.est < target_bytes:
            step += 1
            if self.pending and self.pending[0][0] <= step:
                keep = []
                for p in self.pending:
                    if p[0] <= step:
                        self.complete(p[1], p[2])
                    else:
                        keep.append(p)
                self.pending = keep
            pa = 0.6 if len(self.live) < self.live_target else 0.4
            if not self.live or rng.random() < pa:
                self.alloc()
            else:
                self.free(step)

    def final_segments(self):
        """(segments, ctx_list) where segments are dicts with ctx ids in
        place of frame lists (resolved by the writer)."""
        by_addr = {}
        for blk in self.live:
            by_addr[blk[0]] = (blk, "active_allocated")
        for _, blk, _ in self.pending:
            by_addr[blk[0]] = (blk, "active_pending_free")
        out = []
        for base, segsize, slot, nslots, stream, sctx in sorted(self.segments):
            blocks = []
            free_run = 0
            free_start = base
            alloc_sz = active_sz = req_sz = 0
            for i in range(nslots + 1):
                a = base + slot * i
                if i == nslots:
                    tail = segsize - slot * nslots
                    hit = None
                else:
                    tail = 0
                    hit = by_addr.get(a)
                if hit is None:
                    if not free_run:
                        free_start = a
                    free_run += slot if i < nslots else tail
                    if i < nslots:
                        continue
                if free_run:
                    blocks.append((free_start, free_run, 0, "inactive", None))
                    free_run = 0
                if hit is not None:
                    blk, state = hit
                    blocks.append((a, slot, blk[2], state, blk[4]))
                    self.ctx_refs[blk[4]] += 1
                    active_sz += slot
                    req_sz += blk[2]
                    if state == "active_allocated":
                        alloc_sz += slot
            self.ctx_refs[sctx] += 1
            out.append((base, segsize, alloc_sz, active_sz, req_sz, stream,
                        "small" if segsize == SMALL_SEG else "large", sctx, blocks))
        return out


# ---------------------------------------------------------------- writing
def write_snapshot(f, pool, sim, segs, progress=None):
    w = Writer(f)
    frames = pool.frames
    ctx_stack, ctx_isfree, ctx_refs = sim.ctx_stack, sim.ctx_isfree, sim.ctx_refs
    ctx_lists = {}  # ctx -> list object (generic path, shared ones)

    def stack_of(ctx):
        return (pool.free_stacks if ctx_isfree[ctx] else pool.alloc_stacks)[ctx_stack[ctx]]

    def ctx_list(ctx):
        lst = ctx_lists.get(ctx)
        if lst is None:
            lst = [frames[i] for i in stack_of(ctx)]
            if ctx_refs[ctx] > 1:
                ctx_lists[ctx] = lst
        return lst

    # top-level dict, written by hand so the trace can be streamed
    w.mark()
    w.buf += EMPTY_DICT
    top_memo = w.n
    w.n += 1
    w.buf += MEMOIZE + MARK
    w.save(K["segments"])
    # segments: generic objects (bounded by the live set)
    seg_objs = []
    for base, segsize, alloc_sz, active_sz, req_sz, stream, stype, sctx, blocks in segs:
        bl = []
        for a, sz, req, state, bctx in blocks:
            bl.append({K["address"]: a, K["size"]: sz, K["requested_size"]: req,
                       K["state"]: state, K["frames"]: EMPTY if bctx is None else ctx_list(bctx)})
        seg_objs.append({K["device"]: 0, K["address"]: base, K["total_size"]: segsize,
                         K["allocated_size"]: alloc_sz, K["active_size"]: active_sz,
                         K["requested_size"]: req_sz, K["stream"]: stream,
                         K["segment_type"]: stype, K["segment_pool_id"]: pool_id(),
                         K["is_expandable"]: False, K["frames"]: ctx_list(sctx),
                         K["blocks"]: bl})
    w.save(seg_objs)
    # remember memo ids of context lists that the trace refers to again
    ctx_memo = {}
    for ctx, lst in ctx_lists.items():
        i = w.memo.get(id(lst))
        if i is not None:
            ctx_memo[ctx] = i
    # how often the trace still refers to each shared context
    trace_refs = {}
    for c in sim.ctx:
        if ctx_refs[c] > 1:
            trace_refs[c] = trace_refs.get(c, 0) + 1
    ctx_lists.clear()
    del seg_objs  # still referenced by w.keep, so memoized ids stay unique

    # device_traces = [trace0]
    w.save(K["device_traces"])
    w.mark()
    w.buf += EMPTY_LIST + MEMOIZE
    w.n += 1
    w.mark()  # save(trace0)
    w.buf += EMPTY_LIST + MEMOIZE
    w.n += 1

    memo = w.memo
    stack_cache = {}
    act_objs = tuple(ACTIONS)

    def key(k):
        return enc_get(memo[id(K[k])]) if id(K[k]) in memo else None

    fast_keys = None
    n_entries = len(sim.act)
    acts, addrs, sizes, streams, times, ctxs = sim.act, sim.addr, sim.size, sim.stream, sim.time, sim.ctx
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
        sk = ctx_isfree[ctx] * 1000000 + ctx_stack[ctx]
        mi = ctx_memo.get(ctx)
        cached = stack_cache.get(sk) if mi is None else True
        act_o = act_objs[a]
        if fast_keys is None and id(act_o) in memo and id(K["time_us"]) in memo:
            fast_keys = [key(k) for k in ("action", "addr", "size", "stream", "time_us", "frames")]
        if cached is not None and fast_keys is not None and id(act_o) in memo:
            ka, kad, ks, kst, kt, kf = fast_keys
            # saves start at: dict, key, val, key, val, ... key, list(or get), elems
            parts = [EMPTY_DICT + MEMOIZE + MARK, ka, enc_get(memo[id(act_o)]), kad, enc_int(addrs[j]),
                     ks, enc_int(sizes[j]), kst, enc_int(streams[j]), kt, enc_int(times[j]), kf]
            w.n += 1  # entry dict
            if mi is not None:
                parts.append(enc_get(mi) + SETITEMS)
                body_offs = None
                tr = trace_refs[ctx] - 1
                if tr:
                    trace_refs[ctx] = tr
                else:
                    del trace_refs[ctx], ctx_memo[ctx]
            else:
                body, body_offs = cached
                if ctx in trace_refs:
                    ctx_memo[ctx] = w.n
                    tr = trace_refs[ctx] - 1
                    if tr:
                        trace_refs[ctx] = tr
                    else:
                        del trace_refs[ctx], ctx_memo[ctx]
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
        st = stack_of(ctx)
        lst = [frames[i] for i in st]
        entry = {K["action"]: act_o, K["addr"]: addrs[j], K["size"]: sizes[j],
                 K["stream"]: streams[j], K["time_us"]: times[j], K["frames"]: lst}
        if mi is not None:
            # shared list already emitted: save everything but the list by hand
            entry[K["frames"]] = None
        w.keep.append(entry)
        if mi is None:
            w.save(entry)
            if ctx in trace_refs:
                ctx_memo[ctx] = memo[id(lst)]
        else:
            # emulate save(entry) where frames value is a memo reference
            w.mark()
            w.buf += EMPTY_DICT + MEMOIZE + MARK
            w.n += 1
            memo[id(entry)] = w.n - 1
            for k, v in list(entry.items()):
                w.save(k)
                if v is None:
                    w.mark()
                    w.buf += enc_get(mi)
                else:
                    w.save(v)
            w.buf += SETITEMS
        if ctx in trace_refs:
            tr = trace_refs[ctx] - 1
            if tr:
                trace_refs[ctx] = tr
            else:
                del trace_refs[ctx]
                ctx_memo.pop(ctx, None)
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
    # allocator settings and annotations
    w.save(K["allocator_settings"])
    w.save({"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
            "garbage_collection_threshold": 0.0, "expandable_segments": False,
            "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
            "pinned_use_cuda_host_register": False,
            "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}})
    w.save(K["external_annotations"])
    w.save([])
    w.buf += SETITEMS
    w.finish()
    return top_memo


def build(mib, seed, live_target=None):
    rng = random.Random(seed)
    pool = Pool(rng)
    target = int(mib * (1 << 20))
    if live_target is None:
        live_target = max(200, min(20000, target // 50000))
    sim = Sim(rng, pool, live_target)
    segs_est = live_target * 60
    # sim.est counts every frame reference as a 5-byte LONG_BINGET; the
    # earliest-memoized frames get 2-byte BINGETs, so scale (measured 0.80-0.87)
    sim.run(max(1, int((target - segs_est) / 0.81)))
    segs = sim.final_segments()
    return pool, sim, segs


def as_objects(pool, sim, segs):
    """The same graph as real Python objects (small sizes only, for --check)."""
    frames = pool.frames
    lists = {}

    def lst(ctx):
        if ctx not in lists:
            st = (pool.free_stacks if sim.ctx_isfree[ctx] else pool.alloc_stacks)[sim.ctx_stack[ctx]]
            lists[ctx] = [frames[i] for i in st]
        return lists[ctx]
    # unshared lists must still be distinct objects: lst() caches per ctx,
    # which matches (one list object per context)
    seg_objs = []
    for base, segsize, alloc_sz, active_sz, req_sz, stream, stype, sctx, blocks in segs:
        bl = [{K["address"]: a, K["size"]: sz, K["requested_size"]: req, K["state"]: state,
               K["frames"]: EMPTY if bctx is None else lst(bctx)} for a, sz, req, state, bctx in blocks]
        seg_objs.append({K["device"]: 0, K["address"]: base, K["total_size"]: segsize,
                         K["allocated_size"]: alloc_sz, K["active_size"]: active_sz,
                         K["requested_size"]: req_sz, K["stream"]: stream,
                         K["segment_type"]: stype, K["segment_pool_id"]: pool_id(),
                         K["is_expandable"]: False, K["frames"]: lst(sctx), K["blocks"]: bl})
    trace = [{K["action"]: ACTIONS[sim.act[j]], K["addr"]: sim.addr[j], K["size"]: sim.size[j],
              K["stream"]: sim.stream[j], K["time_us"]: sim.time[j], K["frames"]: lst(sim.ctx[j])}
             for j in range(len(sim.act))]
    return {K["segments"]: seg_objs, K["device_traces"]: [trace],
            K["allocator_settings"]: {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                      "garbage_collection_threshold": 0.0, "expandable_segments": False,
                                      "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
                                      "pinned_use_cuda_host_register": False,
                                      "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}},
            K["external_annotations"]: []}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("output")
    ap.add_argument("--mib", type=float, default=1024)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--check", action="store_true",
                    help="also build the graph as Python objects and compare with pickle.dumps (small sizes)")
    args = ap.parse_args(argv)
    t0 = time.time()
    pool, sim, segs = build(args.mib, args.seed)
    t1 = time.time()
    print("simulated %d trace entries, %d segments, %d frames, %d stacks in %.1fs"
          % (len(sim.act), len(segs), len(pool.frames),
             len(pool.alloc_stacks) + len(pool.free_stacks), t1 - t0), file=sys.stderr)

    def progress(j, n):
        print("  writing %d/%d entries" % (j, n), file=sys.stderr)
    tmp = args.output + ".tmp"
    with open(tmp, "wb", buffering=1 << 20) as f:
        write_snapshot(f, pool, sim, segs, progress)
        size = f.tell()
    import os
    os.replace(tmp, args.output)
    print("wrote %s: %d bytes (%.1f MiB) in %.1fs" % (args.output, size, size / 2**20, time.time() - t0),
          file=sys.stderr)
    if args.check:
        import pickle
        obj = as_objects(pool, sim, segs)
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
