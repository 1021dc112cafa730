#!/usr/bin/env python3
"""Write "the missed shape": one full training step of a Transformer LM recorded with
stacks="all", shaped like the capture that missed issue 24's targets (not in ../shared/real).

    make_missed_shape.py OUTPUT

That capture is known by its figures only (`scale_real_snapshot.py --figures`), kept in
missed_shape.tsv beside this script: 3.2 MB, 19,052 trace events, 668 frame dicts. This writes
a snapshot whose figures are each within 10% of those (ctest bench-missed-shape checks it),
built the way the shared training step (nothanmin-a2_train_step) is: make_big_snapshot's
frame texts and interpreter glue, one frame dict per code location, one list per recorded
context, a list shared where torch shares the context (a free_requested and its
free_completed, a segment_alloc, the alloc that caused it and the segment). Deterministic,
standard library only, about a second.

The program (a Gemma-2-like LM written by hand, as in the shared step: RMSNorm before and
after attention and MLP, rotary embeddings, causal attention written out with soft-capped
scores, every other layer within a sliding window, SwiGLU, dropout, soft-capped logits tied
to the embedding, a hand-written cross entropy and AdamW), one step of MICRO_BATCHES
micro-batches:
  * recording starts after warm-up and torch.cuda.empty_cache(): the parameters and AdamW's
    state are from before recording (their blocks and segments have the one empty frames
    list); the step's activations need new segments, so the trace holds segment_alloc events;
  * per micro-batch: the batch to the GPU, forward (every op allocates its output with the
    Python frames of the line that called it; temporaries die at their line), the loss,
    backward on the autograd thread (C++ frames only: the allocating op, the derivative
    formula, the node, the engine; saved tensors released by their node, gradients dropped by
    the node that consumed them), gradients into .grad (the first micro-batch's become .grad,
    later ones are added in place);
  * gradient clipping, the optimizer (two temporaries per parameter), then
    zero_grad(set_to_none=True): every alloc of the trace is freed by the end.
The memo ids of the frame dicts, and so how many reads are BINGET, follow from what is
written first: the segments, in address order. The first PRE_SEGMENTS_BEFORE_FIRST
one-tensor parameter segments lie below the range empty_cache released, where the step's new
segments go, so the first frames written are those of the step's first new segment.

The object graph is written with pickle.dumps(obj, protocol=4), as torch's _dump_snapshot
does, so what is shared follows from object identity.
"""
import os
import pickle
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_big_snapshot as big  # noqa: E402  (torch's frame texts, the interpreter glue)

SEED = 20260124
# Calibrated against missed_shape.tsv: the layers and micro-batches set the trace's length,
# PRE_SEGMENTS_BEFORE_FIRST how many frame dicts get a one-byte memo id.
LAYERS = 15
MICRO_BATCHES = 2
PARAMS_PER_LAYER = 11  # norm1, wq, wk, wv, wo, norm2, w1, w3, w2, post-attention norm, post-MLP norm
PRE_SEGMENTS_BEFORE_FIRST = 22
T0 = 1769212800000000  # epoch microseconds
BASE_ADDR = 0x7F3A_0000_0000
SHARED_ADDR = 0x7F5A_0000_0000
SMALL_SEG, LARGE_SEG = 2 << 20, 20 << 20


# ---------------------------------------------------------------- code locations
SITE = big.SITE
SCRIPT = "/home/lm/project/scripts/train_lm.py"
MODEL = "/home/lm/project/lm/model.py"
ROPE = "/home/lm/project/lm/rotary.py"
FUNCTIONAL = SITE + "torch/nn/functional.py"
OPTIMIZER = SITE + "torch/optim/optimizer.py"
FUNCTIONAL_EINSUM = SITE + "torch/functional.py"
LOSS = "/home/lm/project/lm/loss.py"
TRAIN_UTIL = "/home/lm/project/lm/train_util.py"
OPTIM = "/home/lm/project/lm/optimizer.py"

# Python call sites, (function, file, line[, n]): where the program's code calls on; n tells
# apart calls on one line (one frame dict per instruction, as py_symbolize makes them).
SITES = {
    # the training script
    "<module>": ("<module>", SCRIPT, 212), "main": ("main", SCRIPT, 198),
    "forward": ("train_step", SCRIPT, 135), "loss": ("train_step", SCRIPT, 137),
    "opt_step": ("train_step", SCRIPT, 144), "zero_grad": ("train_step", SCRIPT, 146),
    "clip": ("train_step", SCRIPT, 142), "batch.x": ("train_step", SCRIPT, 129),
    "batch.y": ("train_step", SCRIPT, 130), "batch.end": ("train_step", SCRIPT, 140),
    # the model
    "lm.forward": ("forward", MODEL, 236), "lm.embed": ("forward", MODEL, 229),
    "lm.head": ("forward", MODEL, 240), "lm.norm": ("forward", MODEL, 238),
    "block.norm1": ("forward", MODEL, 201), "block.attn": ("forward", MODEL, 201, 1),
    "block.norm2": ("forward", MODEL, 202), "block.ffn": ("forward", MODEL, 202, 1),
    "rms.pow": ("forward", MODEL, 48), "rms.rsqrt": ("forward", MODEL, 49), "rms.mul": ("forward", MODEL, 50),
    "linear": ("forward", MODEL, 31), "attn.q": ("forward", MODEL, 142), "attn.k": ("forward", MODEL, 143),
    "attn.v": ("forward", MODEL, 144), "attn.rope_q": ("forward", MODEL, 147),
    "attn.rope_k": ("forward", MODEL, 148), "attn.sdpa": ("forward", MODEL, 151),
    "attn.merge": ("forward", MODEL, 152), "attn.out": ("forward", MODEL, 153),
    "sdpa.scores": ("scaled_dot_product_attention", MODEL, 112),
    "sdpa.scale": ("scaled_dot_product_attention", MODEL, 113),
    "sdpa.mask": ("scaled_dot_product_attention", MODEL, 114),
    "sdpa.softmax": ("scaled_dot_product_attention", MODEL, 115),
    "sdpa.pv": ("scaled_dot_product_attention", MODEL, 116), "softmax.max": ("softmax", MODEL, 98),
    "softmax.exp": ("softmax", MODEL, 99), "softmax.sum": ("softmax", MODEL, 100),
    "softmax.div": ("softmax", MODEL, 100, 1), "ffn.w1": ("forward", MODEL, 173),
    "ffn.silu": ("silu", MODEL, 23), "ffn.w3": ("forward", MODEL, 173, 1),
    "ffn.gate": ("forward", MODEL, 173, 2), "ffn.w2": ("forward", MODEL, 174),
    "embedding": ("forward", MODEL, 64), "local.attn.sdpa": ("forward", MODEL, 150),
    "block.post_attn": ("forward", MODEL, 201, 3), "block.post_ffn": ("forward", MODEL, 202, 3),
    "softcap.div": ("soft_cap", MODEL, 93), "softcap.tanh": ("soft_cap", MODEL, 93, 1),
    "sdpa.softcap": ("scaled_dot_product_attention", MODEL, 113, 1),
    "local.sdpa.softcap": ("sliding_window_attention", MODEL, 127, 1), "lm.softcap": ("forward", MODEL, 241),
    "sdpa.drop": ("scaled_dot_product_attention", MODEL, 115, 1),
    "local.sdpa.drop": ("sliding_window_attention", MODEL, 132, 1), "lm.positions": ("forward", MODEL, 227),
    "local.sdpa.scores": ("sliding_window_attention", MODEL, 126),
    "local.sdpa.scale": ("sliding_window_attention", MODEL, 127),
    "local.sdpa.ones": ("sliding_window_attention", MODEL, 128),
    "local.sdpa.triu": ("sliding_window_attention", MODEL, 128, 1),
    "local.sdpa.window": ("sliding_window_attention", MODEL, 129),
    "local.sdpa.eq": ("sliding_window_attention", MODEL, 130),
    "local.sdpa.mask": ("sliding_window_attention", MODEL, 131),
    "local.sdpa.softmax": ("sliding_window_attention", MODEL, 132),
    "local.sdpa.pv": ("sliding_window_attention", MODEL, 133),
    "sdpa.ones": ("scaled_dot_product_attention", MODEL, 109),
    "sdpa.triu": ("scaled_dot_product_attention", MODEL, 109, 1),
    "sdpa.eq": ("scaled_dot_product_attention", MODEL, 110), "attn.drop": ("forward", MODEL, 201, 2),
    "ffn.drop": ("forward", MODEL, 202, 2),
    # torch.functional
    "einsum": ("einsum", FUNCTIONAL_EINSUM, 407),
    # rotary embeddings
    "rope.cos": ("forward", ROPE, 61), "rope.neg": ("rotate_half", ROPE, 38),
    "rope.cat": ("rotate_half", ROPE, 39), "rope.sin": ("forward", ROPE, 62),
    "rope.add": ("forward", ROPE, 62, 1), "rope.cache": ("forward", ROPE, 58),
    "rope.cache_sin": ("forward", ROPE, 59),
    # the loss
    "ce.max": ("cross_entropy", LOSS, 17), "ce.sub": ("cross_entropy", LOSS, 18),
    "ce.lse": ("cross_entropy", LOSS, 19), "ce.gather": ("cross_entropy", LOSS, 20),
    "ce.mean": ("cross_entropy", LOSS, 21),
    # gradient clipping
    "clip.norm": ("clip_grad_norm", TRAIN_UTIL, 41), "clip.stack": ("clip_grad_norm", TRAIN_UTIL, 42),
    "clip.coef": ("clip_grad_norm", TRAIN_UTIL, 44),
    # torch.optim
    "opt.wrapper": ("wrapper", OPTIMIZER, 487), "opt.zero_grad": ("zero_grad", OPTIMIZER, 970),
    # torch.nn modules
    "einops": ("rearrange", SITE + "einops/einops.py", 591),
    "nn.dropout": ("forward", SITE + "torch/nn/modules/dropout.py", 70),
    # torch.nn.functional
    "dropout": ("dropout", FUNCTIONAL, 1425),
    # the project's AdamW
    "adam.sqrt": ("step", OPTIM, 74), "adam.div": ("step", OPTIM, 75),
}

# ops: name -> (aten name, signature index in make_big_snapshot.SIGNATURES)
OPS = {
    "pow": ("pow_Tensor_Scalar", 3), "mean": ("mean_dim", 1), "add": ("add_Tensor", 0),
    "rsqrt": ("rsqrt", 0), "mul": ("mul_Tensor", 0), "mm": ("mm", 0), "neg": ("neg", 0),
    "cat": ("cat", 8), "bmm": ("bmm", 0), "div": ("div_Tensor", 0), "masked_fill": ("masked_fill_Scalar", 3),
    "amax": ("amax", 1), "sub": ("sub_Tensor", 5), "exp": ("exp", 0), "sum": ("sum_dim_IntList", 1),
    "clone": ("clone", 6), "silu": ("silu", 0), "silu_bw": ("silu_backward", 0),
    "gather": ("gather", 2), "logsumexp": ("logsumexp", 1), "embedding": ("embedding", 2),
    "embedding_bw": ("embedding_dense_backward", 2), "scatter": ("scatter_add", 2),
    "norm": ("_foreach_norm_Scalar", 8), "stack": ("stack", 8), "linalg_norm": ("linalg_vector_norm", 1),
    "clamp": ("clamp", 3),
    "ones": ("ones", 6), "triu": ("triu", 4), "eq": ("eq_Scalar", 3), "index": ("index_Tensor", 2),
    "native_dropout": ("native_dropout", 7), "sqrt": ("sqrt", 0),
    "logical_and": ("logical_and", 0), "view": ("view", 6), "reshape_alias": ("_reshape_alias", 6),
    "slice": ("slice_Tensor", 6), "transpose": ("transpose_int", 6), "empty_like": ("empty_like", 6),
    "zeros": ("zeros", 6), "sigmoid": ("sigmoid", 0), "tanh": ("tanh", 0), "tanh_bw": ("tanh_backward", 0),
    "to": ("_to_copy", 6), "arange": ("arange_start_step", 6),
}
# how an op's outputs reach the allocator (make_big_snapshot.ALLOC_PATHS: create_out,
# native empty_cuda, empty_strided)
OP_PATH = {"mean": 1, "amax": 1, "sum": 1, "logsumexp": 1, "clone": 2, "cat": 2, "stack": 2, "bmm": 1,
           "embedding_bw": 1, "norm": 1, "ones": 2, "index": 1}

B, S, HEADS, D, FF, VOCAB = 8, 512, 16, 1024, 2816, 50304
TOKENS = B * S
ACT, ROW, SCORES = TOKENS * D * 4, TOKENS * 4, B * HEADS * S * S * 4
# One block, op by op: (output, op, Python sites innermost first, bytes, index of the weight
# among the block's parameters whose gradient the op's node makes, outputs that die here)
_ATT, _FFN = ("block.attn",), ("block.ffn",)  # (Step.outer adds LM.forward and train_step)


def _rms(block, weight):
    at = (block,)
    return [("%s.sq" % block, "pow", ("rms.pow",) + at, ACT, None, ()),
            ("%s.ms" % block, "mean", ("rms.pow",) + at, ROW, None, ("%s.sq" % block,)),
            ("%s.eps" % block, "add", ("rms.rsqrt",) + at, ROW, None, ("%s.ms" % block,)),
            ("%s.r" % block, "rsqrt", ("rms.rsqrt",) + at, ROW, None, ("%s.eps" % block,)),
            ("%s.xr" % block, "mul", ("rms.mul",) + at, ACT, None, ()),
            ("%s.out" % block, "mul", ("rms.mul",) + at, ACT, weight, ())]


def _heads(x, at):
    """rearrange(x, "b s (h d) -> b h s d"): a view, whose node copies the gradient back."""
    return (x + ".heads", "view", ("einops", at) + _ATT, ACT, None, ())


def _linear(name, at, size, weight):
    """The project's Linear: einsum of the input and the weight (the node makes the weight's
    gradient)."""
    return (name, "mm", ("einsum", "linear", at) + (_ATT if at.startswith("attn") else _FFN), size, weight, ())


def _rope(q):
    at = ("attn.rope_" + q,) + _ATT
    return [(q + ".ci", "index", ("rope.cache",) + at, S * D * 2, None, ()),
            (q + ".si", "index", ("rope.cache_sin",) + at, S * D * 2, None, ()),
            (q + ".cos", "mul", ("rope.cos",) + at, ACT, None, ()),
            (q + ".x1", "slice", ("rope.neg", "rope.sin") + at, ACT // 2, None, ()),
            (q + ".x2", "reshape_alias", ("rope.neg", "rope.sin") + at, ACT // 2, None, ()),
            (q + ".neg", "neg", ("rope.neg", "rope.sin") + at, ACT // 2, None, ()),
            (q + ".rot", "cat", ("rope.cat", "rope.sin") + at, ACT, None, (q + ".neg",)),
            (q + ".sin", "mul", ("rope.sin",) + at, ACT, None, (q + ".rot",)),
            (q + ".r", "add", ("rope.add",) + at, ACT, None, (q + ".cos", q + ".sin", q + ".ci", q + ".si"))]


def _dropout(x, at):
    """nn.Dropout: native_dropout makes the mask and the output; the input dies."""
    sites = ("dropout", "nn.dropout") + at
    return [(x + ".mask", "native_dropout", sites, TOKENS * D, None, ()),
            (x + ".drop", "native_dropout", sites, ACT, None, (x,))]


def _softcap(x, sites, size):
    """cap * tanh(x / cap): Gemma 2's soft-capping of attention scores and of the logits."""
    tanh_at = ("softcap.tanh",) + sites[1:]
    return [(x + ".over", "div", sites, size, None, ()),
            (x + ".tanh", "tanh", tanh_at, size, None, (x + ".over",)),
            (x + ".capped", "mul", tanh_at, size, None, (x + ".tanh",))]


def _attention(local):
    """Causal attention written out; every other layer attends within a sliding window (its
    own function, with a band mask)."""
    pre = "local." if local else ""
    sdpa = (pre + "attn.sdpa",) + _ATT
    soft = (pre + "sdpa.softmax",) + sdpa
    mask = [("ones", "ones", (pre + "sdpa.ones",) + sdpa, S * S, None, ()),
            ("causal", "triu", (pre + "sdpa.triu",) + sdpa, S * S, None, ())]
    if local:
        mask += [("window", "triu", ("local.sdpa.window",) + sdpa, S * S, None, ("ones",)),
                 ("band", "logical_and", ("local.sdpa.window",) + sdpa, S * S, None, ("causal", "window"))]
    dies = ("band",) if local else ("ones", "causal")
    mask += [("mask", "eq", (pre + "sdpa.eq",) + sdpa, S * S, None, dies)]
    return [("scores", "bmm", (pre + "sdpa.scores",) + sdpa, SCORES, None, ()),
            ("scaled", "div", (pre + "sdpa.scale",) + sdpa, SCORES, None, ("scores",))] + _softcap(
        "scaled", ("softcap.div", pre + "sdpa.softcap") + sdpa, SCORES) + mask + [
        ("masked", "masked_fill", (pre + "sdpa.mask",) + sdpa, SCORES, None, ("scaled.capped", "mask")),
        ("max", "amax", ("softmax.max",) + soft, SCORES // S, None, ()),
        ("shifted", "sub", ("softmax.max",) + soft, SCORES, None, ("masked", "max")),
        ("exp", "exp", ("softmax.exp",) + soft, SCORES, None, ("shifted",)),
        ("total", "sum", ("softmax.sum",) + soft, SCORES // S, None, ()),
        ("probs", "div", ("softmax.div",) + soft, SCORES, None, ()),
        ("probs.mask", "native_dropout", ("dropout", pre + "sdpa.drop") + sdpa, SCORES // 4, None, ()),
        ("probs.drop", "native_dropout", ("dropout", pre + "sdpa.drop") + sdpa, SCORES, None, ("probs",)),
        ("pv", "bmm", (pre + "sdpa.pv",) + sdpa, ACT, None, ())]


def _block(local):
    return (_rms("block.norm1", 0) + [
        _linear("q", "attn.q", ACT, 1), _heads("q", "attn.q"), _linear("k", "attn.k", ACT, 2),
        _heads("k", "attn.k"), _linear("v", "attn.v", ACT, 3), _heads("v", "attn.v")]
        + _rope("q") + _rope("k") + _attention(local) + [
        ("pv.t", "transpose", ("attn.merge",) + _ATT, ACT, None, ()),
        ("merged", "clone", ("attn.merge",) + _ATT, ACT, None, ("pv",)),
        _linear("o", "attn.out", ACT, 4)] + _dropout("o", ("attn.drop",))
        + _rms("block.post_attn", 9) + [
        ("x2", "add", _ATT, ACT, None, ("block.post_attn.out",))]
        + _rms("block.norm2", 5) + [
        _linear("h1", "ffn.w1", TOKENS * FF * 4, 6),
        ("act", "silu", ("ffn.silu", "ffn.w1") + _FFN, TOKENS * FF * 4, None, ()),
        _linear("h3", "ffn.w3", TOKENS * FF * 4, 7),
        ("gated", "mul", ("ffn.gate",) + _FFN, TOKENS * FF * 4, None, ()),
        _linear("down", "ffn.w2", ACT, 8)] + _dropout("down", ("ffn.drop",))
        + _rms("block.post_ffn", 10) + [
        ("x3", "add", _FFN, ACT, None, ("block.post_ffn.out",))])


VIEWS = ("view", "reshape_alias", "slice", "transpose")  # ops that allocate in backward only
BLOCKS = (_block(False), _block(True))  # layer i is BLOCKS[i % 2]
HEAD = _softcap("logits", ("softcap.div", "lm.softcap"), TOKENS * VOCAB * 4)
# What each node allocates, in order (its input gradients, then its weight's): the op that
# allocates and whether the gradient is the size of the forward output or of the weight.
BACKWARD = {
    "pow": (("pow", "tmp", "pow_backward"), ("mul", "out", "pow_backward")),
    "mean": (("div", "out", "mean_backward"),),
    "rsqrt": (("pow", "tmp", None), ("mul", "out", None)),
    "mul": (("mul", "out", "mul_tensor_backward"), ("mul", "out", None)),
    "mm": (("mm", "out", "mm_mat1_backward"), ("mm", "w", "mm_mat2_backward")),
    "neg": (("neg", "out", None),),
    "bmm": (("bmm", "out", None), ("bmm", "out", "bmm_mat2_backward")),
    "div": (("div", "out", "div_tensor_self_backward"), ("neg", "tmp", "div_tensor_other_backward"),
            ("mul", "tmp", "div_tensor_other_backward"), ("div", "out", "div_tensor_other_backward"),
            ("sum", "out", "sum_to")),
    "view": (("empty_like", "out", "view_backward"),), "reshape_alias": (("empty_like", "out", None),),
    "slice": (("zeros", "out", "slice_backward_wrapper"),), "transpose": (("empty_like", "out", None),),
    "masked_fill": (("masked_fill", "out", None),), "sub": (("neg", "out", None),), "exp": (("mul", "out", None),),
    "silu": (("sigmoid", "tmp", None), ("silu_bw", "out", None)),
    "amax": (("zeros", "out", "value_selecting_reduction_backward"),), "tanh": (("tanh_bw", "out", None),),
    "add": (("add", "out", None),), "native_dropout": (("mul", "out", "native_dropout_double_backward"),),
}


class Code:
    """The step's stacks, innermost frame first, from make_big_snapshot's Program (the
    shared step's frame texts and interpreter glue), with this program's own call sites."""

    def __init__(self, rng):
        p = self.p = big.Program(rng)
        p.script = [None, p.frame(*SITES["main"]), p.frame(*SITES["<module>"])]
        self.sites = {}
        self.ops = {}
        self.releases = {}
        self.formulas = {}

    def site(self, key):
        if key not in self.sites:
            func, filename, line = SITES[key][:3]
            self.sites[key] = self.p.frame(func, filename, line)
        return self.sites[key]

    def op(self, key):
        if key not in self.ops:
            name, sig = OPS[key]
            self.ops[key] = self.p.op_chain(name, big.SIGNATURES[sig])
        return self.ops[key]

    def python(self, sites):
        """sites: innermost first; the last is the line of train_step the call is made from."""
        p = self.p
        out = []
        for k, key in enumerate(sites[:-1]):
            out.append(self.site(key))
            if SITES[key][0] != "forward":
                continue  # a Python function called from Python: the same interpreter frame
            # a Module's forward, entered through nn.Module.__call__ (two shapes of the glue)
            if k % 2 == 0:
                out += [p.eval_default[k % 3], p.call_impl, p.eval_frame[0], p.cfunction_call,
                        p.wrapped_call_impl, p.eval_frame[0], p.cfunction_call]
            else:
                out += [p.eval_frame[1]] + p.call_prepend + [p.call_impl, p.eval_default[0], p.wrapped_call_impl]
        ev, call = p.eval_frame[0], p.cfunction_call
        out += [self.site(sites[-1]), ev, call, p.script[1], ev, call, p.script[2], ev]
        return out + p.call_prepend + [p.eval_default[0]] + p.process_tail

    def dicts(self, ids):
        """Program keeps frames by index; a stack is a tuple of the frame dicts."""
        return tuple(self.p.frames[i] for i in ids)

    def forward_alloc(self, op, sites, path=0):
        dispatch, forward, _ = self.op(op)
        return self.dicts(self.p.alloc_paths[path][1] + dispatch + forward + self.python(sites))

    def backward_alloc(self, op, node, path=0, formula=None):
        """An op run by a backward node on the autograd thread: C++ frames only, through the
        derivative formula (autograd's generated details::) when the node has one."""
        mid = []
        if formula is not None:
            if formula not in self.formulas:
                self.formulas[formula] = self.p.frame(
                    "torch::autograd::generated::details::%s(at::Tensor, at::Tensor const&, at::Tensor const&)"
                    % formula, "FunctionsManual.cpp")
            mid = [self.formulas[formula]]
        return self.dicts(self.p.alloc_paths[path][1] + self.op(op)[0] + mid + self.op(node)[2] + self.p.engine_tail)

    def formula_free(self, formula, node):
        """An intermediate of a derivative formula, freed before the formula returns."""
        mid = [self.formulas[formula]] if formula else []
        return self.dicts(self.p.free_prefix + mid + self.op(node)[2][:1] + self.p.engine_tail)

    def accumulate_free(self):
        """A gradient added into .grad in place by AccumulateGrad, then dropped."""
        if "accumulate" not in self.releases:
            self.releases["accumulate"] = [self.p.frame(
                "torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)", "??")]
        return self.dicts(self.p.free_prefix + self.releases["accumulate"] + self.p.engine_tail)

    def python_free(self, sites):
        return self.dicts(self.p.free_prefix + self.p.py_free + self.python(sites))

    def engine_free(self, node=None, consumed=False):
        """A tensor the engine drops: a saved variable released by its node (release_variables),
        a gradient dropped with the inputs of the node that consumed it, or one the engine's
        InputBuffer let go (no node)."""
        p = self.p
        mid = []
        if node is not None and consumed:
            if "~vector" not in self.releases:
                self.releases["~vector"] = [
                    p.frame("std::vector<at::Tensor, std::allocator<at::Tensor> >::~vector()", ""),
                    p.frame("torch::autograd::call_function(std::shared_ptr<torch::autograd::GraphTask>&, "
                            "torch::autograd::Node*, torch::autograd::InputBuffer&)", "??")]
            mid = self.op(node)[2][:1] + self.releases["~vector"]
        elif node is not None:
            if node not in self.releases:
                if "reset" not in self.releases:
                    self.releases["reset"] = p.frame("torch::autograd::SavedVariable::reset_data()", "??")
                self.releases[node] = [
                    self.releases["reset"],
                    p.frame("torch::autograd::generated::%sBackward0::release_variables()"
                            % big.camel(OPS[node][0]), "??")]
            mid = self.releases[node]
        return self.dicts(p.free_prefix + mid + p.engine_tail)


# ---------------------------------------------------------------- the caching allocator
K = big.K
EMPTY = []  # the one empty frames list: blocks and segments without a recorded context
SMALL, LARGE = "small", "large"


class Allocator:
    """Segments cut into equal slots, reused by size, as a model of the caching allocator.
    A new segment during the trace is a segment_alloc event sharing the alloc's list."""

    def __init__(self, rng):
        self.rng = rng
        self.segments = []     # [base, size, slot, frames, {addr: requested size} live]
        self.free_slots = {}   # slot size -> [(addr, segment)]
        self.trace = []
        self.t = T0
        self.tracing = False
        self.traced_live = set()  # addresses the trace allocated and has not freed
        # address space: parameters of a segment of their own from BASE_ADDR, then the range
        # empty_cache released (the step's new segments), then more parameters; segments of
        # several small blocks from SHARED_ADDR
        self.next_pre = BASE_ADDR
        self.next_new = None
        self.next_shared = SHARED_ADDR
        self.singles = 0

    def emit(self, action, addr, size, frames):
        self.t += self.rng.choice(big.TIME_STEPS)
        self.trace.append({K["action"]: action, K["addr"]: addr, K["size"]: size, K["stream"]: 0,
                           K["time_us"]: self.t, K["frames"]: frames})

    def new_segment(self, slot, frames):
        size = SMALL_SEG if slot <= (1 << 20) else LARGE_SEG if slot < (10 << 20) else -(-slot // (2 << 20)) * (2 << 20)
        if self.tracing:
            base, self.next_new = self.next_new, self.next_new + size
            self.emit(big.ACTIONS[big.A_SEG], base, size, frames)
        elif size // slot == 1:
            # a tensor of its own segment: the first of these lie below the range that
            # empty_cache released, where the step's new segments go
            base, self.next_pre = self.next_pre, self.next_pre + size
            self.singles += 1
            if self.singles == PRE_SEGMENTS_BEFORE_FIRST:
                self.next_new = self.next_pre
                self.next_pre = self.next_new + (64 << 30)
        else:  # segments of several blocks, in a range of their own
            base, self.next_shared = self.next_shared, self.next_shared + size
        seg = [base, size, slot, frames, {}]
        self.segments.append(seg)
        self.free_slots.setdefault(slot, []).extend((base + slot * i, seg) for i in range(size // slot - 1, -1, -1))

    def alloc(self, size, stack):
        """stack None: before recording (no context). Returns the block."""
        slot = max(512, -(-size // 512) * 512)
        frames = list(stack) if stack is not None else EMPTY  # one list per context
        if not self.free_slots.get(slot):
            self.new_segment(slot, frames)
        addr, seg = self.free_slots[slot].pop()
        seg[4][addr] = size
        if self.tracing:
            self.emit(big.ACTIONS[big.A_ALLOC], addr, size, frames)
            self.traced_live.add(addr)
        return (addr, seg, size)

    def free(self, block, stack):
        addr, seg, size = block
        del seg[4][addr]
        self.traced_live.discard(addr)
        frames = list(stack)
        self.emit(big.ACTIONS[big.A_FREQ], addr, size, frames)
        self.emit(big.ACTIONS[big.A_FCOMP], addr, size, frames)
        self.free_slots[seg[2]].append((addr, seg))

    def segment_objects(self):
        """The segments at the end, in address order, as torch's snapshot() lists them:
        live blocks active_allocated (no context: allocated before recording), free runs
        merged into one inactive block."""
        out = []
        for base, size, slot, frames, live in sorted(self.segments, key=lambda s: s[0]):
            blocks, run_start, run = [], base, 0
            for a in range(base, base + size // slot * slot, slot):
                if a in live:
                    if run:
                        blocks.append(block_object(run_start, run, 0, "inactive"))
                        run = 0
                    blocks.append(block_object(a, slot, live[a], "active_allocated"))
                else:
                    run_start = a if not run else run_start
                    run += slot
            tail = size - size // slot * slot
            if run or tail:
                blocks.append(block_object(run_start if run else base + size - tail, run + tail, 0, "inactive"))
            allocated = sum(b[K["size"]] for b in blocks if b[K["state"]] != "inactive")
            out.append({K["device"]: 0, K["address"]: base, K["total_size"]: size,
                        K["allocated_size"]: allocated, K["active_size"]: allocated,
                        K["requested_size"]: sum(live.values()), K["stream"]: 0,
                        K["segment_type"]: SMALL if size == SMALL_SEG else LARGE,
                        K["segment_pool_id"]: tuple([0, 0]), K["is_expandable"]: False,
                        K["frames"]: frames, K["blocks"]: blocks})
        return out


STATES = {s: s for s in ("inactive", "active_allocated")}  # one str object each, as torch's


def block_object(addr, size, requested, state):
    return {K["address"]: addr, K["size"]: size, K["requested_size"]: requested,
            K["state"]: STATES[state], K["frames"]: EMPTY}


# ---------------------------------------------------------------- the training step
MB = 1 << 20
BF16, FP32 = 2, 4


class Step:
    """Runs the step: forward and backward per micro-batch, then AdamW and zero_grad."""

    def __init__(self, rng):
        self.rng = rng
        self.code = Code(rng)
        self.mem = Allocator(rng)
        self.annotations = []
        # parameters (fp32), in module order: shapes by name
        self.shapes = [("embed", VOCAB * D)]
        for _ in range(LAYERS):
            self.shapes += [("norm1.g", D), ("wq", D * D), ("wk", D * D), ("wv", D * D), ("wo", D * D),
                            ("norm2.g", D), ("w1", FF * D), ("w3", FF * D), ("w2", D * FF),
                            ("post_attn.g", D), ("post_ffn.g", D)]
        self.shapes += [("norm.g", D)]
        self.grads = {}  # parameter index -> its .grad block

    # -- one alloc or free, with the stack that makes it
    def fwd(self, op, sites, size, path=0):
        return self.mem.alloc(size, self.code.forward_alloc(op, sites + self.outer, path))

    def bwd(self, op, node, size, path=0, formula=None):
        return self.mem.alloc(size, self.code.backward_alloc(op, node, path, formula))

    def pyfree(self, blocks, sites):
        for b in blocks:
            self.mem.free(b, self.code.python_free(sites + self.outer))

    def release(self, blocks, node=None, consumed=False):
        for b in blocks:
            self.mem.free(b, self.code.engine_free(node, consumed))

    def run(self):
        mem = self.mem
        # before recording: parameters and AdamW's exp_avg and exp_avg_sq
        for _ in range(3):
            for _, n in self.shapes:
                mem.alloc(n * FP32, None)
        mem.tracing = True
        for m in range(MICRO_BATCHES):
            self.micro_batch(m)
        self.clip_grad_norm()
        self.optimizer_step()
        self.zero_grad()
        assert not mem.traced_live, "every alloc of the trace is freed by its end: %d are not" % len(mem.traced_live)
        return mem

    def accumulate(self, param, grad, first):
        """AccumulateGrad: the first micro-batch's gradient becomes .grad (live until
        zero_grad); later ones are added in place and dropped."""
        if first and param not in self.grads:
            self.grads[param] = grad
        else:
            self.mem.free(grad, self.code.accumulate_free())

    def block_forward(self, block):
        """One block, op by op: outputs by name; temporaries die at their line."""
        out = {}
        for name, op, sites, size, _, dies in block:
            if op in VIEWS:
                continue  # a view: nothing allocated until its node runs in backward
            out[name] = self.fwd(op, list(sites), size, OP_PATH.get(op, 0))
            self.pyfree([out.pop(d) for d in dies], list(sites))
        return out

    def block_backward(self, block, saved, param, first):
        """The block's nodes in reverse on the autograd thread: each allocates its input
        gradients, releases what it saved and drops the gradient it consumed."""
        for name, op, _, size, weight, dies in reversed(block):
            wsize = self.shapes[param + weight][1] * FP32 if weight is not None else 0
            made = []
            for bop, which, formula in BACKWARD.get(op, ()):
                made.append(self.bwd(bop, op, wsize if which == "w" else size, OP_PATH.get(bop, 0), formula))
                if which == "tmp":  # an intermediate of the derivative formula, dropped inside it
                    self.mem.free(made.pop(), self.code.formula_free(formula, op))
            if name in saved:
                self.release([saved.pop(name)], op)
            if weight is not None:  # the last gradient a node makes is its weight's
                self.accumulate(param + weight, made.pop(), first)
            if made:
                self.release(self.pending, op, consumed=True)
                self.pending = made

    def micro_batch(self, m):
        first = m == 0
        self.outer = []  # the batch to the GPU
        ids = self.fwd("to", ["batch.x"], TOKENS * 8, 2)
        targets = self.fwd("to", ["batch.y"], TOKENS * 8, 2)
        self.outer = ["forward"]
        positions = self.fwd("arange", ["lm.positions"], S * 8, 2)
        self.outer = ["lm.forward", "forward"]
        x = self.fwd("embedding", ["embedding", "lm.embed"], TOKENS * D * FP32)
        saved = [self.block_forward(BLOCKS[i % 2]) for i in range(LAYERS)]
        self.outer = ["forward"]
        self.pyfree([positions], ["lm.forward"])
        self.outer = ["lm.forward", "forward"]
        norm = self.fwd("mul", ["rms.mul", "lm.norm"], ACT)
        logits = self.fwd("mm", ["einsum", "linear", "lm.head"], TOKENS * VOCAB * FP32)
        capped = self.block_forward(HEAD)
        self.pyfree([logits], ["softcap.div", "lm.softcap"])
        # the loss, written out: logits - max, logsumexp, the targets' logits, the mean
        self.outer = ["loss"]
        peak = self.fwd("amax", ["ce.max"], ROW)
        shifted = self.fwd("sub", ["ce.sub"], TOKENS * VOCAB * FP32)
        self.pyfree([peak], ["ce.sub"])
        lse = self.fwd("logsumexp", ["ce.lse"], ROW)
        picked = self.fwd("gather", ["ce.gather"], ROW)
        nll = self.fwd("sub", ["ce.mean"], ROW)
        self.pyfree([picked], ["ce.mean"])
        loss = self.fwd("mean", ["ce.mean"], FP32)
        self.pyfree([nll], ["ce.mean"])
        # backward, from the loss down, on the autograd thread
        g = self.bwd("div", "mean", ROW)
        self.pending = [g]
        for op, node, size, kept in (("neg", "sub", ROW, None), ("scatter", "gather", TOKENS * VOCAB * FP32, None),
                                      ("exp", "logsumexp", TOKENS * VOCAB * FP32, lse),
                                      ("add", "add", TOKENS * VOCAB * FP32, shifted)):
            made = self.bwd(op, node, size, OP_PATH.get(op, 0))
            if kept is not None:
                self.release([kept], node)
            self.release(self.pending)
            self.pending = [made]
        self.block_backward(HEAD, capped, 0, first)
        gx = self.bwd("mm", "mm", ACT)
        self.accumulate(0, self.bwd("mm", "mm", VOCAB * D * FP32), first)  # the head is the embedding, tied
        self.release(self.pending)
        self.pending = [gx]
        gn = self.bwd("mul", "mul", ACT)
        self.release([norm], "mul")
        self.accumulate(len(self.shapes) - 1, self.bwd("sum", "mul", D * FP32, 1), first)
        self.release(self.pending)
        self.pending = [gn]
        param = 1 + PARAMS_PER_LAYER * (LAYERS - 1)
        for i in reversed(range(LAYERS)):
            self.block_backward(BLOCKS[i % 2], saved[i], param, first)
            param -= PARAMS_PER_LAYER
        ge = self.bwd("embedding_bw", "embedding", VOCAB * D * FP32)
        self.release(self.pending)
        self.release([x], "embedding")
        self.accumulate(0, ge, first)
        self.outer = []
        self.pyfree([loss, ids, targets], ["batch.end"])

    def optimizer_step(self):
        """The project's own AdamW (a torch.optim.Optimizer), one parameter at a time:
        denom = v.sqrt() + eps makes two temporaries; the updates are in place."""
        start = self.mem.t
        self.outer = ["opt.wrapper", "opt_step"]  # Optimizer.step's profiling wrapper
        for _, size in self.shapes:
            n = size * FP32
            root = self.fwd("sqrt", ["adam.sqrt"], n)
            denom = self.fwd("add", ["adam.sqrt"], n)
            self.pyfree([root], ["adam.sqrt"])
            self.pyfree([denom], ["adam.div"])  # after p.addcdiv_(m, denom)
        self.annotations.append(("Optimizer.step#AdamW.step", start, self.mem.t))

    def clip_grad_norm(self):
        """The gradients' global norm: a norm per gradient, stacked, reduced, a clip factor."""
        self.outer = ["clip"]
        norms = [self.fwd("norm", ["clip.norm"], FP32) for _ in self.grads]
        total = self.fwd("stack", ["clip.stack"], len(norms) * FP32)
        self.pyfree(norms, ["clip.stack"])
        norm = self.fwd("linalg_norm", ["clip.stack"], FP32)
        self.pyfree([total], ["clip.stack"])
        coef = self.fwd("clamp", ["clip.coef"], FP32)
        self.pyfree([norm, coef], ["clip.coef"])

    def zero_grad(self):
        start = self.mem.t
        self.outer = ["opt.zero_grad", "zero_grad"]
        self.pyfree([self.grads.pop(p) for p in sorted(self.grads)], [])
        self.annotations.append(("Optimizer.zero_grad#AdamW.zero_grad", start, self.mem.t))


# ---------------------------------------------------------------- writing
def snapshot(step):
    mem = step.mem
    notes = []
    for name, start, end in step.annotations:
        for stage, t in (("START", start), ("END", end)):
            notes.append({big.fresh("stage"): big.fresh(stage), big.fresh("name"): big.fresh(name),
                          K["device"]: 0, K["time_us"]: t})
    return {K["segments"]: mem.segment_objects(), K["device_traces"]: [mem.trace],
            K["allocator_settings"]: big.ALLOCATOR_SETTINGS, K["external_annotations"]: notes}


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: make_missed_shape.py OUTPUT")
    step = Step(random.Random(SEED))
    step.run()
    data = pickle.dumps(snapshot(step), protocol=4)
    tmp = argv[1] + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, argv[1])
    print("wrote %s: %d bytes, %d trace events, %d segments" % (argv[1], len(data), len(step.mem.trace),
                                                               len(step.mem.segments)), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
