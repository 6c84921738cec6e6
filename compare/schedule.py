"""What a row is put through, in order: the one public schedule of checks and timings. The runner follows it, and
the tests that plant wrong kernels read it from here, so "caught by the tests" means "caught by a real run".

Checks. Every shape a row is timed at is also checked (a kernel wrong only on large shapes can't be timed as
right), besides the op's own check shapes. At every check shape and dtype: random inputs and each of the op's
special input sets; at the op's own check shapes (up to LAYOUT_MAX_ELEMENTS) also each non-contiguous layout of
compare.layouts (torch.compile rows: at the two largest of those, since every layout is a compile). Every case is
three calls of the row, each on inputs of its own:
  1. a warm-up call whose output is discarded: Triton's autotuner benchmarks every config into the output of the
     first call at a new shape, which would hide the parts the chosen config leaves unwritten; JIT compilation and
     torch.compile happen here too;
  2. call A, into freshly poisoned memory: judged as it returns;
  3. call B, on other inputs, again into poisoned memory: judged, and A's output is judged again after it, so an
     output buffer reused across calls, a workspace left dirty, or a result cached from earlier inputs shows.
After timing (or, without timing, once more at the end), the first and last check shapes are checked again on
fresh inputs: a row must not change its answers once warm.

Timing. At every timed shape the row rotates among at least MIN_INPUT_SETS distinct input sets (more where they
fit in L2), and at least MIN_SAMPLES calls are timed; the outputs of the first and the last timed call are judged
against the reference of the inputs they were given.

Seeds. Every input set has a seed derived from the run's base seed, the op, the row, the dtype, the shape, the
input set's name and the call: stable across runs and machines, reported with each result, and different for every
row, so no row can be handed memory still holding another row's correct answer.
"""
from __future__ import annotations

import dataclasses
import math
import zlib

import torch

from . import layouts
from .spec import Op, Shape

RANDOM = "random"
MIN_INPUT_SETS = 2  # distinct input sets a timed cell rotates among, at every size
MIN_SAMPLES = 10  # timed calls per cell, at least, however long one call takes
# Layout cases are run at the op's own check shapes up to this many elements moved (inputs and output): a stride bug
# shows on a small matrix as well as on a large one, and strided copies of the largest shapes would double their
# memory.
LAYOUT_MAX_ELEMENTS = 1 << 26


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def case_seed(base_seed: int, *parts: object) -> int:
    """A seed per input set, stable across runs and machines, reported with the result."""
    return (base_seed * 1_000_003 + zlib.crc32("|".join(map(str, parts)).encode())) % 2**31


@dataclasses.dataclass(frozen=True)
class CheckCase:
    """One check: a shape, dtype, input set and layout, with the seeds of its three calls (warm-up, A, B)."""

    dtype: torch.dtype
    shape: Shape
    inputs: str  # RANDOM or the name of one of the op's special input sets
    layout: str | None  # None (contiguous) or a name in compare.layouts.LAYOUTS
    seeds: tuple[int, int, int]  # warm-up, A, B
    stage: str = "check"  # "check", or "recheck" for the fresh-input checks after timing
    timed_shape: bool = True  # whether a timed cell of the row uses this dtype and shape (see check_cases)

    @property
    def label(self) -> str:
        """How the report names the inputs of this case: 'random', 'with -inf', 'random, transposed', ..."""
        text = self.inputs + (f", {self.layout}" if self.layout else "")
        return text + (", after timing" if self.stage == "recheck" else "")


@dataclasses.dataclass(frozen=True)
class TimedCell:
    dtype: torch.dtype
    shape: Shape
    seeds: tuple[int, ...]  # one per input set; at least MIN_INPUT_SETS


def timed_shapes(op: Op, quick: bool = False, sizes: list[Shape] | None = None) -> list[Shape]:
    if sizes:
        return [tuple(s) for s in sizes]
    return [tuple(s) for s in (op.quick_bench_shapes or op.bench_shapes[:2])] if quick else [
        tuple(s) for s in op.bench_shapes]


def check_shapes(op: Op, gpu: bool, timed: list[Shape]) -> list[Shape]:
    """The op's check shapes, then every timed shape not among them; without a GPU (Triton's interpreter), the
    op's small interpreter shapes only, since nothing is timed there."""
    if not gpu:
        return [tuple(s) for s in (op.interpret_shapes or op.check_shapes[:3])]
    own = [tuple(s) for s in op.check_shapes]
    return own + [s for s in timed if s not in own]


def case_seeds(base_seed: int, op: Op, impl: str, dtype, shape, inputs: str, layout, stage: str,
               calls: int = 3) -> tuple[int, ...]:
    """The seeds of a case's calls (warm-up, A, B) or of a timed cell's input sets."""
    return tuple(case_seed(base_seed, op.name, impl, dtype_name(dtype), shape, inputs, layout or "", stage, call)
                 for call in range(calls))


def check_cases(op: Op, impl: str, dtypes: list[torch.dtype], gpu: bool, timed: list[Shape],
                base_seed: int = 0) -> list[CheckCase]:
    """Every check of one row before timing, in the order they run: per dtype, per shape, random inputs, each
    special input set, then each layout. Each case says whether its shape is one the row is timed at: where it is
    not, a row that autotunes keeps the choices it makes there apart from those of timed shapes
    (compare.worker.tuned_apart), so no timed call can start from a choice no timed shape made."""
    shapes = check_shapes(op, gpu, timed)
    own = [tuple(s) for s in (op.check_shapes if gpu else shapes)]
    def elements(shape):
        return op.bytes_moved(shape, torch.float32) // 4

    layout_shapes = {s for s in own if elements(s) <= LAYOUT_MAX_ELEMENTS}
    if impl.startswith("torch:compile"):
        # torch.compile (dynamic=False) compiles anew for every layout, and max-autotune autotunes each compile:
        # torch's own code gets its layouts checked at the op's two largest such shapes, not at every one.
        layout_shapes = set(sorted(layout_shapes, key=elements)[-2:])
    cases = []
    for dtype in dtypes:
        for shape in (s for s in shapes if op.supports(impl, dtype, s)):
            is_timed = shape in timed
            for inputs in (RANDOM, *op.special_inputs):
                cases.append(CheckCase(dtype, shape, inputs, None,
                                       case_seeds(base_seed, op, impl, dtype, shape, inputs, None, "check", 3),
                                       timed_shape=is_timed))
            if shape in layout_shapes:
                for layout in layouts.names_for(op_input_dims(op, shape)):
                    cases.append(CheckCase(dtype, shape, RANDOM, layout,
                                           case_seeds(base_seed, op, impl, dtype, shape, RANDOM, layout, "check", 3),
                                           timed_shape=is_timed))
    return cases


def recheck_cases(op: Op, impl: str, dtypes: list[torch.dtype], gpu: bool, timed: list[Shape],
                  base_seed: int = 0) -> list[CheckCase]:
    """The checks after timing: random inputs never seen before, at the first and the last check shape."""
    shapes = check_shapes(op, gpu, timed)
    cases = []
    for dtype in dtypes:
        for shape in dict.fromkeys((shapes[0], shapes[-1])):
            if op.supports(impl, dtype, shape):
                cases.append(CheckCase(dtype, shape, RANDOM, None,
                                       case_seeds(base_seed, op, impl, dtype, shape, RANDOM, None, "recheck", 3),
                                       stage="recheck", timed_shape=shape in timed))
    return cases


def timed_cells(op: Op, impl: str, dtypes: list[torch.dtype], timed: list[Shape], l2_bytes: int | None,
                base_seed: int = 0) -> list[TimedCell]:
    """Per dtype and timed shape, the seeds of the input sets the timed calls rotate among: at least
    MIN_INPUT_SETS, and for inputs that would sit in L2 enough copies that no call finds its data cached by the
    previous one (about four L2s' worth, at most 8)."""
    cells = []
    for dtype in dtypes:
        for shape in (s for s in timed if op.supports(impl, dtype, s)):
            sets = input_set_count(op.bytes_moved(shape, dtype), l2_bytes)
            cells.append(TimedCell(dtype, shape, case_seeds(base_seed, op, impl, dtype, shape, RANDOM, None, "timing",
                                                        sets)))
    return cells


def input_set_count(nbytes: int, l2_bytes: int | None) -> int:
    if l2_bytes and nbytes < 2 * l2_bytes:
        return max(MIN_INPUT_SETS, min(8, math.ceil(4 * l2_bytes / max(nbytes, 1))))
    return MIN_INPUT_SETS


def op_input_dims(op: Op, shape: Shape) -> int:
    """The number of dimensions of the op's inputs at this shape (the layouts that apply depend on it), from a
    one-element-per-dim probe of make_inputs on the CPU: the shapes' length is not the inputs' rank for every op
    (matmul's (M, N, K) makes 2-D inputs)."""
    probe = tuple(1 for _ in shape)
    inputs = op.make_inputs(probe, torch.float32, torch.device("cpu"), torch.Generator().manual_seed(0))
    return max(t.dim() for t in inputs)
