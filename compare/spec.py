"""What an op declares. Each ``specs/<op>.py`` defines ``OP = Op(...)``; nothing in the harness names an op.

An op's implementations come from four places, all discovered:
  * ``cuda_src/<op>.cu``: every schema in its ``TORCH_LIBRARY(lab_<op>, m)`` block is a row ``cuda:<name>``;
  * ``triton_src/<op>.py``: every function decorated with ``@variant("<name>")`` is a row ``triton:<name>``;
  * the spec's ``peers``: implementations from other projects (``Peer``), each a row ``peer:<name>``, run where
    their package is installed and reported as skipped, with what to install, where it is not;
  * the spec's ``torch_eager`` function is ``torch:eager``, and the harness compiles it for ``torch:compile``
    (one row per entry of ``compile_modes``); each entry of the spec's ``vendor_rows`` (the vendor library's own
    entry points) is a row ``torch:<name>``.

An op with a gradient declares ``backward=Backward(...)``. Each of its rows is then a pair: a forward, called as
``forward(*inputs)``, returning the op's output or a tuple whose first tensor is the output and whose others are
whatever the row saves for its backward (statistics such as mean and rstd: the row's choice, never judged
directly); and a backward, called as ``backward(grad_output, *inputs, *saved)``, returning one gradient per input
named in ``Backward.grads``, in that order. In ``cuda_src/<op>.cu`` the backward of schema ``<name>`` is the schema
``<name>_backward``; in ``triton_src/<op>.py`` it is the function decorated with ``@backward("<name>")``. The torch
rows take their backward from autograd, and so do the peer rows (a peer's forward is an autograd.Function's apply).
"""
from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import inspect
from typing import Any, Callable, Mapping, Sequence

import torch

from .targets import Target

Shape = tuple[int, ...]
Inputs = tuple[torch.Tensor, ...]
# make_inputs(shape, dtype, device, generator) -> tuple of tensors; the implementations are called as impl(*inputs).
MakeInputs = Callable[[Shape, torch.dtype, torch.device, torch.Generator], Inputs]


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """An output element passes when |out - expected| <= atol + rtol·|ref| + ulps·ulp(expected).

    ref is the float64 reference. With ulps = 0, expected is ref itself. With ulps > 0, expected is ref correctly
    rounded to the output dtype (what an exact kernel would return), and ulp(expected) the spacing of the output
    dtype there: "within 2 ulps of the correctly rounded answer" is Tolerance(atol=0, rtol=0, ulps=2), with atol
    left for outputs whose spacing is absolute (subnormals, cancellation near zero)."""

    atol: float
    rtol: float
    ulps: float = 0.0


@dataclasses.dataclass(frozen=True)
class Backward:
    """The gradient of an op (compare.passes makes its backward and forward+backward passes from it). Every input of
    the op gets a gradient; the float64 reference's are autograd's on the spec's reference."""

    inputs: Sequence[str]  # the op's inputs by name, in order ("x", "weight", "bias"): the gradients are d<name>
    bytes_moved: Callable[[Shape, torch.dtype], int]  # fewest bytes a backward must read + write
    # Per (dtype, shape), one Tolerance per gradient, in the order of `inputs` (or per (dtype, shape, input set)).
    tolerances: Callable[..., Sequence[Tolerance]]
    # The gradient of the output a backward is given, from the op's inputs (its shape and dtype follow the output).
    make_grad_output: Callable[[tuple, torch.Generator], torch.Tensor]
    flops: Callable[[Shape], int] = lambda shape: 0
    # Check shapes for the backward passes only, beside the op's own: shapes where the forward's output is constant
    # (LayerNorm of one column is its bias), which the forward's checks rightly refuse as degenerate.
    check_shapes: Sequence[Shape] = ()
    # The op's special input sets the backward passes leave out, where the gradient is not a kernel's to match (the
    # spec says why).
    skip_special_inputs: Sequence[str] = ()
    # The backward pass's goals (compare.targets), judged by `python -m compare summary` on the results.
    targets: Sequence[Target] = ()


@dataclasses.dataclass(frozen=True)
class Peer:
    """An implementation of the op from another project (Liger-Kernel's LayerNorm), the row ``peer:<name>`` of the
    op's ``peers``. The harness checks and times it like every other row; where its package is not installed the
    row is skipped with a message that says what to install. Its line counts are not the lab's to report."""

    # The top-level import name whose presence decides whether the row runs ("liger_kernel"). The parent, which
    # must never run a row's code, only asks whether it can be found (a dotted name would import its parent).
    package: str
    # Called in the worker that runs the row, never in the parent: imports the package and returns the row's forward,
    # called as forward(*inputs). For an op with a gradient, an autograd.Function's apply: its backward is autograd's.
    load: Callable[[], Callable]
    pip: str  # the distribution to install ("liger-kernel"); its version goes into the results' env
    needs_gpu: bool = True

    def __post_init__(self):
        if not self.package.isidentifier():
            raise ValueError(f"Peer package {self.package!r}: give the top-level import name (e.g. 'liger_kernel'), "
                             f"which the harness looks up without importing anything")

    def installed(self) -> bool:
        """Whether the package can be imported, found without importing it (nothing of it runs here)."""
        return importlib.util.find_spec(self.package) is not None

    def version(self) -> str | None:
        """The installed version of the distribution, None where it has no package metadata (a bare folder on the
        path)."""
        try:
            return importlib.metadata.version(self.pip)
        except importlib.metadata.PackageNotFoundError:
            return None


PEER = "peer"  # the backend of the rows from Op.peers: the peer "liger" is the row "peer:liger"


@dataclasses.dataclass(frozen=True)
class Op:
    name: str
    summary: str
    make_inputs: MakeInputs
    reference: Callable[..., torch.Tensor]  # float64 inputs -> float64 output, the ground truth
    torch_eager: Callable[..., torch.Tensor]
    bytes_moved: Callable[[Shape, torch.dtype], int]  # fewest bytes any implementation must read + write
    flops: Callable[[Shape], int]
    check_shapes: Sequence[Shape]
    bench_shapes: Sequence[Shape]
    dtypes: Sequence[torch.dtype]
    # Per dtype, or a function (dtype, shape) -> Tolerance where error grows with the shape (a K-long dot product).
    tolerances: Mapping[torch.dtype, Tolerance] | Callable[[torch.dtype, Shape], Tolerance]
    # "memory": report GB/s against the measured copy bandwidth. "compute": report TFLOP/s against the vendor
    # library (the fastest of ceiling_rows, default torch:eager) measured at the same shape and dtype in the same run.
    roofline: str = "memory"
    quick_bench_shapes: Sequence[Shape] | None = None  # --quick; defaults to the two smallest bench shapes
    interpret_shapes: Sequence[Shape] | None = None  # small shapes for Triton's CPU interpreter (no GPU)
    # Named extra input generators for the checks, e.g. {"huge values": fn}; same signature as make_inputs.
    special_inputs: Mapping[str, MakeInputs] = dataclasses.field(default_factory=dict)
    # Why Triton's CPU interpreter cannot run this op's Triton rows right (an operation it emulates wrongly), or
    # None. Without a GPU those rows are then skipped with this reason (compare.runner), and the op's own tests
    # check what the interpreter can show; on a GPU they are checked like every other row.
    interpreter_unfit: str | None = None
    # Rows that by design take only some of the op's dtypes, e.g. {"cuda:mma": (torch.float32,)} for a tensor-core
    # kernel without an fp32 path. Those pairs are neither checked nor timed; the row must reject them cleanly.
    unsupported_dtypes: Mapping[str, Sequence[torch.dtype]] = dataclasses.field(default_factory=dict)
    # Likewise shapes a row refuses by design, as a predicate: {"triton:basic": lambda shape: shape[1] > 65536}.
    unsupported_shapes: Mapping[str, Callable[[Shape], bool]] = dataclasses.field(default_factory=dict)
    # Rows built from architecture-specific code (sm_90a's wgmma and setmaxnreg run on compute capability 9.0 and on
    # nothing else), as {"cuda:wgmma": (9, 0)}. On another GPU such a row is reported as skipped, with the reason.
    requires_capability: Mapping[str, tuple[int, int]] = dataclasses.field(default_factory=dict)
    # Implementations from other projects, by row name: {"liger": Peer(...)} is the row peer:liger.
    peers: Mapping[str, Peer] = dataclasses.field(default_factory=dict)
    compile_modes: Sequence[str] = ("default",)
    # The vendor library's own entry points beside torch_eager, each a row torch:<name> that needs a GPU (attention's
    # scaled_dot_product_attention pinned to one backend: {"sdpa-cudnn": fn, ...}); checked and timed like torch:eager.
    vendor_rows: Mapping[str, Callable[..., torch.Tensor]] = dataclasses.field(default_factory=dict)
    # For a compute-bound op, the rows whose fastest timing at each shape and dtype is the ceiling the others are a
    # fraction of (attention: the fastest SDPA backend). Default: torch:eager, the vendor library of matmul.
    ceiling_rows: Sequence[str] = ("torch:eager",)
    cuda_flags: Sequence[str] = ()  # extra nvcc flags for cuda_src/<op>.cu
    # A shape where some tensor has more than 2^31 elements: the bad-input tests run every row at it (16-bit dtype)
    # and check the last rows of the output, to catch 32-bit index overflow.
    index_overflow_shape: Shape | None = None
    # For an op whose output depends on each element's place in the whole input (a mask drawn from a counter-based
    # generator of the element's index): the reference of a slice, f(first, *inputs), the inputs holding elements
    # first, first + 1, ... of the whole call. The 2^31 test judges the output's last elements with it.
    reference_from: Callable[..., torch.Tensor] | None = None
    # Shapes the sanitizer (python -m compare OP --sanitize) runs after its default ones, the op's first small check
    # shapes: where a path of some step is reached only by longer rows than those (the norms' backward through shared
    # memory takes 16-bit rows of 4K-16K elements). Each tool runs those under its size cap (compare.sanitize).
    sanitize_shapes: Sequence[Shape] = ()
    # Where a shape is a tuple of named sizes (M, N, K), how to print it; default "1024x4096".
    shape_names: Sequence[str] | None = None
    # The (dtype, bench shape) cells where the report's ladder table shows what each step of a kernel file bought
    # (compare/ladder.py): pick those where the steps differ. Default: every dtype at the largest bench shape.
    ladder_cells: Sequence[tuple[torch.dtype, Shape]] | None = None
    backward: Backward | None = None  # the op's gradient: it then runs as three passes (compare.passes)
    # The names of an op's outputs where it returns several (("q", "scales")); set by compare.passes on the Op of a
    # pass ("dx", "dweight", ...).
    output_names: Sequence[str] | None = None
    # Each output's dtype for inputs of a dtype, where it is not the input's: an fp8 quantization returns
    # (float8_e4m3fn, float32), an fp8 matmul bfloat16. Default: every output in the dtype of the op's first input.
    output_dtypes: Callable[[torch.dtype], torch.dtype | tuple[torch.dtype, ...]] | None = None
    # For an op whose spec leaves one output some freedom that another depends on (fp8 quantization: a scale within
    # one ulp of absmax / 448, and q exact given the scale the row returned): f(ref, outputs, *inputs), the
    # reference given the row's outputs, from the plain reference ref and the float64 inputs. Used where the row
    # returned what it should (tensors of the reference's shapes); the free output's own entry stays its plain
    # reference, judged within its tolerance.
    reference_given_outputs: Callable[..., tuple] | None = None
    # The torch:compile rows compile with inductor's correctly rounded float32 division (Triton's `/` is an
    # approximate one), for a spec that fixes the rounding of its divisions bit for bit.
    compile_divides_exactly: bool = False
    # The metadata of the outputs on fake tensors (torch.compile, torch.library.opcheck), where running torch_eager
    # on them cannot give it: an output whose size depends on an input's value (fp8 quantization's scales, one per
    # group of `group` elements). Default: torch_eager.
    fake: Callable[..., object] | None = None
    # How bytes_moved and flops count, in a sentence the report prints beside the timings, where a reader could
    # count another way (attention: whether the exponentials count, what causal halves).
    counting: str = ""
    # Goals the op's rows are judged against in `python -m compare summary` (compare.targets): a fraction of the
    # ceiling, or being no slower than other rows, at the cells each names.
    targets: Sequence[Target] = ()
    pass_of: tuple[str, str] | None = None

    def output_dtype(self, dtype: torch.dtype) -> torch.dtype | tuple[torch.dtype, ...]:
        """The dtype the output must have for inputs of dtype: one, or one per output (output_dtypes)."""
        if not self.output_dtypes:
            return dtype
        declared = self.output_dtypes(dtype)
        return tuple(declared) if isinstance(declared, (tuple, list)) else declared

    def tolerance(self, dtype: torch.dtype, shape: Shape, inputs: str = "random") -> Tolerance | tuple[Tolerance, ...]:
        """The output's Tolerance; for a pass with several outputs (compare.passes), a tuple, one per output.
        inputs: the check's input set, for a tolerances function that takes it as a third argument (an input set
        whose arithmetic differs: LayerNorm's rows far from zero carry the rounding of their mean)."""
        if callable(self.tolerances):
            return call_tolerances(self.tolerances, dtype, shape, inputs)
        return self.tolerances[dtype]

    def supports(self, impl: str, dtype: torch.dtype, shape: Shape) -> bool:
        """False for the (dtype, shape) pairs a row declares it refuses; those are neither checked nor timed."""
        if dtype in self.unsupported_dtypes.get(impl, ()):
            return False
        refuses = self.unsupported_shapes.get(impl)
        return not (refuses and refuses(tuple(shape)))

    def unavailable_reason(self, impl: str, capability: tuple[int, int] | None) -> str | None:
        """Why a row cannot run here: a peer whose package is not installed, or a row built for another compute
        capability than this GPU's (None: it can, or there is no GPU to ask)."""
        backend, _, variant = impl.partition(":")
        peer = self.peers.get(variant) if backend == PEER else None
        if peer is not None and not peer.installed():
            base = self.pass_of[0] if self.pass_of else self.name
            return f"{peer.package} is not installed: pip install {peer.pip} (an optional peer of {base})"
        needed = self.requires_capability.get(impl)
        if needed is None or capability is None or tuple(capability) == tuple(needed):
            return None
        return (f"built for compute capability {needed[0]}.{needed[1]} only (architecture-specific instructions); "
                f"this GPU is {capability[0]}.{capability[1]}")

    def ladder(self) -> list[tuple[torch.dtype, Shape]]:
        if self.ladder_cells is not None:
            return [(dtype, tuple(shape)) for dtype, shape in self.ladder_cells]
        return [(dtype, tuple(self.bench_shapes[-1])) for dtype in self.dtypes]

    def describe_shape(self, shape: Shape) -> str:
        if self.shape_names:
            return " ".join(f"{n}={s}" for n, s in zip(self.shape_names, shape))
        return "x".join(str(s) for s in shape)

    def __post_init__(self):
        if self.roofline not in ("memory", "compute"):
            raise ValueError(f"op {self.name!r}: roofline must be 'memory' or 'compute', not {self.roofline!r}")
        off_bench = [(d, s) for d, s in (self.ladder_cells or ())
                     if d not in self.dtypes or tuple(s) not in {tuple(b) for b in self.bench_shapes}]
        if off_bench:
            raise ValueError(f"op {self.name!r}: ladder_cells {off_bench} are not (dtype, bench shape) pairs of the "
                             f"op; the ladder shows timed cells only")
        missing = [d for d in self.dtypes if not callable(self.tolerances) and d not in self.tolerances]
        if missing:
            raise ValueError(f"op {self.name!r}: no tolerance for dtype(s) {missing}")


# Sizes for 1-D elementwise ops (gelu, add, new ones from `compare new`): check sizes that are multiples of no block
# or vector width plus one of 16M elements, timing sizes from 1M to 256M elements, tiny sizes for the interpreter, and
# one past 2^31 elements for the index-overflow test. Spread into an Op with **ELEMENTWISE_SHAPES.
ELEMENTWISE_SHAPES = dict(
    check_shapes=[(1,), (127,), (1025,), (98_432,), (1_000_003,), (1 << 24,)],
    bench_shapes=[(1 << 20,), (1 << 22,), (1 << 24,), (1 << 26,), (1 << 28,)],
    quick_bench_shapes=[(1 << 20,), (1 << 24,)],
    interpret_shapes=[(1,), (127,), (4099,)],
    index_overflow_shape=(2**31 + 33,),
)


def call_tolerances(fn: Callable, dtype: torch.dtype, shape: Shape, inputs: str):
    """A tolerances function called as (dtype, shape), or (dtype, shape, inputs) where it takes the input set."""
    takes_inputs = len(inspect.signature(fn).parameters) >= 3
    return fn(dtype, shape, inputs) if takes_inputs else fn(dtype, shape)


def backward(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Marks a function in ``triton_src/<op>.py`` as the backward of the row ``triton:<name>`` (an op whose spec
    declares a backward): called as ``fn(grad_output, *inputs, *saved)``, it returns the gradients the spec names."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.lab_backward = name
        return fn

    return mark


def variant(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Marks a function in ``triton_src/<op>.py`` as the implementation row ``triton:<name>``."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.lab_variant = name
        return fn

    return mark
