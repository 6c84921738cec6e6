"""What a run produces and the report reads: one op's result (OpResult) and the records it is made of. The runner
(compare.runner) fills them in; the report (compare.report) renders them and writes them to files. Each record
turns into the json's dict of the same keys through dataclasses.asdict (Ceilings, whose unset fields the json
leaves out, through its to_dict)."""
from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from .capture import Capture
    from .check import CheckResult
    from .count import LineCount
    from .timing import Timing


class Status(str, enum.Enum):
    """How a row ended. A str: each member is equal to, prints as and is written to files as its value."""

    OK = "ok"
    FAIL = "FAIL"  # an output the judge refused, an implausible timing, or a call the kernel accounting refused
    DEGENERATE = "degenerate"  # a case that an all-zeros or constant output would pass too
    BUILD_FAILED = "build failed"
    ERROR = "error"  # the row's code raised
    CRASHED = "crashed"  # its worker process died, or the CUDA context was lost
    TIMED_OUT = "timed out"
    SKIPPED = "skipped"  # the op declares it unavailable here (dtype, shape, GPU capability)
    NEEDS_GPU = "needs GPU"
    BUILT_NEEDS_GPU = "built (needs GPU to run)"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


# Row statuses that make a run fail (exit status 1).
FAILED = (Status.FAIL, Status.DEGENERATE, Status.BUILD_FAILED, Status.ERROR, Status.CRASHED, Status.TIMED_OUT)


@dataclasses.dataclass
class RowStatus:
    impl: str
    status: Status  # a Status's value is taken too ("ok", or a RowFailure's "crashed", "timed out")
    message: str = ""

    def __post_init__(self):
        self.status = Status(self.status)


@dataclasses.dataclass
class CudaKernelBuild:
    """One kernel of a CUDA row as ptxas reported it (compare.build), with the build of the .cu it is in."""

    impl: str
    cold_s: float  # load_inline's build of the whole .cu, all its rows
    warm_s: float  # loading it from the build cache
    kernel: str  # the signature: "void gelu_vec_kernel<float>(float const*, float*, long)"
    registers: int
    spills: int  # bytes
    shared_bytes: int
    stack_bytes: int


@dataclasses.dataclass
class TritonKernelBuild:
    """One @triton.jit kernel a Triton row launched, over every variant compiled for it (autotune configs x dtypes);
    read in the row's worker (compare.worker.triton_resources)."""

    impl: str
    kernel: str
    variants: int
    registers: str  # "11-29": the range over the variants, or one number
    spills: int  # the most of any variant, bytes
    shared_bytes: int  # the most of any variant
    chosen_configs: list[str] = dataclasses.field(default_factory=list)  # per tuning key (worker.autotune_picks)


KernelBuild = Union[CudaKernelBuild, TritonKernelBuild]


@dataclasses.dataclass
class JitRecord:
    """A Triton row's first call in a dtype: JIT compilation plus autotuning where the cache holds neither
    (compare.caches)."""

    impl: str
    dtype: str
    first_call_s: float  # this run's
    cold: bool = True  # whether this run's first call was the cold one
    cold_first_call_s: float | None = None  # the cold one: this run's, or the one recorded when the cache was filled


@dataclasses.dataclass
class KernelAccount:
    """What one call of a row launched, under torch.profiler (compare.accounting.account)."""

    impl: str
    dtype: str
    shape: str
    kernels: list[str]  # base names of the kernels launched
    launches: int
    kernel_us: float  # GPU time of those kernels
    foreign: list[str]  # kernels that are not from the row's own source (CUDA and Triton rows)
    other_streams: list[str]  # "name (stream n)" for work off the stream the call is timed on
    problem: str  # why the row fails, or ""


@dataclasses.dataclass
class LadderStep:
    """One line of a kernel file's version map: the row it is and what it changes against the step before."""

    backend: str  # "cuda" or "triton"
    number: int
    impl: str  # "cuda:warp"
    change: str
    source: str  # "cuda_src/softmax.cu:12"


# The rows whose fastest timing is a compute-bound op's ceiling where its spec names none (Op.ceiling_rows), and
# where a result file from before the json recorded them says nothing.
DEFAULT_CEILING_ROWS = ("torch:eager",)


def ceiling_name(rows, quote: str = "") -> str:
    """What a compute-bound op's fractions are of, in words: "torch:eager (the vendor library)", or "the fastest of
    torch:sdpa-cudnn, torch:sdpa-flash" (each name between quote marks: "`" for markdown)."""
    rows = list(rows)
    if len(rows) == 1:
        return f"{quote}{rows[0]}{quote} (the vendor library)"
    return "the fastest of " + ", ".join(f"{quote}{r}{quote}" for r in rows)


@dataclasses.dataclass
class Ceilings:
    """What the rows are measured against, measured in the same run in a worker that loaded no row."""

    copy_gbps: float | None = None  # a large-buffer device-to-device copy, bytes read + written
    same_bytes_copy_error: str | None = None  # why the per-shape copies (OpResult.same_bytes_copies) are missing

    def to_dict(self) -> dict:
        """The json's form: only what was measured (or failed)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclasses.dataclass(kw_only=True)
class RowRecords:
    """What rows produce: kept per row (RowOutcome), and over all the op's rows (OpResult.add)."""

    checks: list[CheckResult] = dataclasses.field(default_factory=list)
    timings: list[Timing] = dataclasses.field(default_factory=list)
    # A Triton row's kernels; in OpResult also each CUDA row's, from the build of its .cu
    build: list[KernelBuild] = dataclasses.field(default_factory=list)
    jit: list[JitRecord] = dataclasses.field(default_factory=list)
    captures: list[Capture] = dataclasses.field(default_factory=list)
    kernels: list[KernelAccount] = dataclasses.field(default_factory=list)  # per row and dtype


@dataclasses.dataclass
class RowOutcome(RowRecords):
    """Everything one implementation's row produced."""

    status: RowStatus
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)  # wall time per phase: checks, timing, ...


# A row phase's parts: "<phase>/<part>" in a row's seconds, the line "of the <phase>: <part>" of the op's phase table,
# right after "rows: <phase>" and not added into the total (compare.runner._sum_phases, compare.report).
PHASE_PART_LINE = "of the {phase}: {part}"


def is_phase_part(label: str) -> bool:
    """Whether a line of the phase table is a part of the row phase above it, not a phase of its own."""
    return label.startswith("of the ")


@dataclasses.dataclass
class OpResult(RowRecords):
    op: str
    summary: str
    roofline: str
    env: dict
    ceilings: Ceilings = dataclasses.field(default_factory=Ceilings)
    # Memory-bound ops: per timed shape and dtype, a plain copy of the same bytes (timing.same_bytes_copy)
    same_bytes_copies: list[Timing] = dataclasses.field(default_factory=list)
    rows: list[RowStatus] = dataclasses.field(default_factory=list)
    loc: list[LineCount] = dataclasses.field(default_factory=list)
    row_seconds: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)  # per row, wall time per phase
    seed: int = 0
    isolation: dict = dataclasses.field(default_factory=dict)
    # The kernel files' version maps (compare.ladder), per side in ladder order, and the (dtype, shape) cells where
    # the report shows what each step bought (the spec's ladder_cells that were timed).
    ladder: list[LadderStep] = dataclasses.field(default_factory=list)
    # Wall seconds per phase of the whole op (compare.runner._sum_phases); "rows: <phase>" summed over the rows
    phases: dict[str, float] = dataclasses.field(default_factory=dict)
    ladder_cells: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    # A compute-bound op's ceiling rows (compare.spec.Op.ceiling_rows): at each shape and dtype the fastest of those
    # that passed is the ceiling (compare.runner.relate_to_ceilings)
    ceiling_rows: list[str] = dataclasses.field(default_factory=lambda: list(DEFAULT_CEILING_ROWS))
    counting: str = ""  # the spec's Op.counting: how its bytes and flops are counted, where a reader could differ

    def add(self, row: RowOutcome) -> None:
        """A row's records, after those of the rows before it."""
        for field in dataclasses.fields(RowRecords):
            getattr(self, field.name).extend(getattr(row, field.name))
        self.row_seconds[row.status.impl] = row.seconds

    def failed_rows(self) -> list[RowStatus]:
        return [r for r in self.rows if r.status in FAILED]
