"""An op with a gradient, as the three ops the harness checks and times: its forward, its backward and the two in a
row. Each pass is an Op of its own (``layernorm``, ``layernorm-backward``, ``layernorm-fwd-bwd``), so every part
of the harness (checks, timing, reports, lanes) works on it unchanged, and each gets the report of its own bytes.

The passes of an op whose spec declares ``backward=Backward(...)`` (compare.spec):
  * forward: the op's inputs; the row's forward, its first output judged against the spec's reference;
  * backward: the op's inputs and a gradient of the output (dy, drawn like an input); the judged call runs the
    row's forward, then its backward on what the forward saved; the gradients are judged against autograd of the
    float64 reference. A timed call runs the backward alone: the forward runs once per input set before timing
    (``prepare``), as a training step has run it before its backward;
  * forward+backward: the same inputs; the output and every gradient judged, both halves timed together.

The torch rows take their backward from autograd: the forward runs with inputs that require gradients, and the timed
backward is ``torch.autograd.grad`` on its graph (kept between calls); torch.compile compiles the forward, and
AOTAutograd the backward with it."""
from __future__ import annotations

import dataclasses
from typing import Callable

import torch

from .spec import Op, call_tolerances

FORWARD, BACKWARD, BOTH = "forward", "backward", "forward+backward"
SUFFIX = {FORWARD: "", BACKWARD: "-backward", BOTH: "-fwd-bwd"}


def names(op: Op) -> list[str]:
    """The op names an op runs as: itself, and its backward passes where it declares a backward."""
    return [op.name + SUFFIX[p] for p in ((FORWARD, BACKWARD, BOTH) if op.backward else (FORWARD,))]


def split_name(name: str) -> tuple[str, str]:
    """'layernorm-backward' -> ('layernorm', 'backward'); a name without a pass suffix is its own forward."""
    for which in (BACKWARD, BOTH):
        if name.endswith(SUFFIX[which]):
            return name[: -len(SUFFIX[which])], which
    return name, FORWARD


def pass_op(op: Op, which: str) -> Op:
    """The Op of one pass of `op` (the op itself for its forward)."""
    if op.backward is None:
        return op
    if which == FORWARD:  # the op itself, its rows' forwards returning what they save beside the output
        return dataclasses.replace(op, pass_of=(op.name, FORWARD))
    back = op.backward
    grads = tuple(f"d{n}" for n in back.inputs)
    outputs = grads if which == BACKWARD else ("y", *grads)

    def reference(*args):
        *inputs, dy = args
        leaves = [t.detach().clone().requires_grad_() for t in inputs]
        y = op.reference(*leaves)
        found = torch.autograd.grad(y, leaves, dy)
        return tuple(found) if which == BACKWARD else (y.detach(), *found)

    def tolerances(dtype, shape, inputs="random"):
        grad_tols = tuple(call_tolerances(back.tolerances, dtype, shape, inputs))
        return grad_tols if which == BACKWARD else (op.tolerance(dtype, shape, inputs), *grad_tols)

    def bytes_moved(shape, dtype):
        return back.bytes_moved(shape, dtype) + (op.bytes_moved(shape, dtype) if which == BOTH else 0)

    def flops(shape):
        return back.flops(shape) + (op.flops(shape) if which == BOTH else 0)

    specials = {name: _with_grad_output(make, back) for name, make in op.special_inputs.items()
                if name not in back.skip_special_inputs}
    return dataclasses.replace(
        op, name=op.name + SUFFIX[which], summary=f"{op.summary}: {which}",
        make_inputs=_with_grad_output(op.make_inputs, back),
        reference=reference, bytes_moved=bytes_moved, flops=flops, tolerances=tolerances, special_inputs=specials,
        check_shapes=[*op.check_shapes, *[s for s in back.check_shapes if s not in op.check_shapes]],
        output_names=outputs, backward=None, pass_of=(op.name, which),
        targets=back.targets if which == BACKWARD else ())


def _with_grad_output(make, back):
    def made(shape, dtype, device, generator):
        inputs = tuple(make(shape, dtype, device, generator))
        return (*inputs, back.make_grad_output(inputs, generator))

    return made


def row(op: Op, forward: Callable, backward: Callable | None) -> Callable:
    """The callable the harness checks and times for a pass op's row, from the row's forward and backward (a
    hand-written pair; for the torch rows, backward None: autograd). Plain ops: the forward itself."""
    if op.pass_of is None:
        return forward
    which = op.pass_of[1]
    if which == FORWARD:
        def forward_only(*inputs):
            out = forward(*inputs)
            return out[0] if isinstance(out, (tuple, list)) else out

        return forward_only
    prepare, run = (_own_halves if backward is not None else _autograd_halves)(forward, backward)
    if which == BOTH:
        def both(*args):
            y, *grads = run(*prepare(*args))
            return (y, *grads)

        return both

    def backward_pass(*args):
        return tuple(run(*prepare(*args))[1:])

    # Timing: prepare once per input set, then time the backward alone (compare.worker.time_cell).
    backward_pass.lab_prepare = prepare
    backward_pass.lab_timed = lambda *state: tuple(run(*state)[1:])
    return backward_pass


def _own_halves(forward, backward):
    """A hand-written pair: prepare runs the forward; run calls the backward on what it saved and returns
    (y, *gradients)."""
    def prepare(*args):
        *inputs, dy = args
        out = forward(*inputs)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return (out, tuple(inputs), dy)

    def run(out, inputs, dy):
        grads = backward(dy, *inputs, *out[1:])
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        return (out[0], *grads)

    return prepare, run


def _autograd_halves(forward, _):
    """torch rows: the forward on leaves that require gradients; run takes torch.autograd.grad of its graph, kept
    for the next call (retain_graph), so the timed backward is autograd's alone."""
    def prepare(*args):
        *inputs, dy = args
        leaves = tuple(t.detach().requires_grad_() for t in inputs)
        return (forward(*leaves), leaves, dy)

    def run(y, leaves, dy):
        grads = torch.autograd.grad(y, leaves, dy, retain_graph=True)
        return (y.detach(), *grads)

    return prepare, run
