"""LayerNorm of an (M, N) tensor in Triton, forward and backward. Spec: specs/layernorm.py. CUDA side:
cuda_src/layernorm.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/layernorm.md, -backward.md, -fwd-bwd.md):
  v1 basic    one row per program, the row in tiles of up to 4096 elements read three times (mean, variance,
              output); backward: dx per row, dweight and dbias as a row of partial sums per program, added to in
              memory for every row the program takes, summed by a second kernel
  v2 fused    + rows of up to 64K elements forward, 32K backward: the row held whole in registers and read once,
              several short rows per program; backward: each program takes a contiguous run of rows and keeps
              its dweight and dbias sums in registers, writing its partial row once
  v3 prefetch + backward rows of up to 8K: the next row's loads issued before this row is reduced, so loads stay
              in flight while a program reduces (the forward is v2's)
  v4 split    + backward rows past 16K: a row cut into chunks shared by programs, its sums gathered by a first
              kernel and its dx written by a second (the row read twice; the forward is v2's)
  v5 occupancy  + forward rows of 8K-16K elements with the registers capped so that two programs share a
              multiprocessor: one program's loads in flight while the other reduces (the backward is v4's)
  v6 direct   + every launch without Triton's per-call Python: v5's forward and backward through
              triton_src.launcher (triton_src/softmax.py's v6), the host's time per call cut, the GPU's work the same
  v7 reread   + forward rows past 32K: v1's tiles again, held by many small programs instead of one large one,
              the statistics merged tile by tile, the row's second read served by L2 (eviction hints)
  v8 newest_first  + the second pass from the row's end, where L2 holds the row's most recent tiles
  v9 tile_ahead  + each pass loads its next tile before it uses this one (two tiles in flight a thread), and the
              statistics are kept per lane through the first pass (no block-wide sum a tile), merged once after it
  v10 exchange  + backward rows past 8K: a row split over programs that are all resident at once, each passing its
              part of the row's two sums to the others through L2 and waiting for theirs, so the row is read once
              (the forward is v9's)
  v11 exchange_ahead  + v10 with fp16/bf16 rows' loads issued two rows ahead instead of one
  v12 lean_exchange  + v10 with two reductions across the program a row instead of six (the part's two sums as
              one; the check that every part is published and the sums of the parts as one), and each row's
              statistics loaded a row ahead, its dx written one row late (v11's rows ahead left out)
  v13 lean_ahead  + v12 with fp16/bf16 rows' loads two rows ahead, the late row kept as loaded (16-bit x and dy)
              and its x̂ and w·dy computed again for its dx
  v14 exchange_forward  + forward rows past 16K split over programs as v10 splits the backward's, read once, each
              part publishing its Σx and squares about its own mean, each row's y written one row late, every
              row's loads two rows ahead (the backward is v13's; slower than v9: a turn's latency a row)

As in cuda_src/layernorm.cu, each step takes the rows it adds a path for and hands every other shape to the step
before, so each row runs every shape (rows longer than v2 holds go to v1, whose tiles take any N).

The forward saves mean and rstd (2·M floats) for the backward, which then reads x once more instead of recomputing
the statistics. The backward's weight and bias gradients are sums over all M rows: each program owns a set of rows
and adds their dy·x̂ and dy into its own row of a (G, N) fp32 buffer, which no other program touches, so no atomics
or locks are needed; a second kernel sums the G rows per column. The buffer is written in full by every call, so
nothing carries over between calls. (Triton tutorial 05 shares fewer partial rows between programs under a lock;
owning them costs more memory and no waiting.)
"""
import torch
import triton
import triton.language as tl

import triton_src
from compare.spec import backward, variant
from compare.validate import InputError, check_inputs
from triton_src import as_written

EPS = 1e-5  # the spec's (specs/layernorm.py)


# ---- basic: the row in tiles, any length. ------------------------------------------------------------------------
# Tiles of up to TILE elements: the row is read once per statistic and once more to write, but any N works.
TILE = 4096


def _tile(n: int) -> int:
    return min(TILE, triton_src.next_power_of_2(n))


@triton.jit
def load_tile_hinted(ptr, row, n, start, BLOCK: tl.constexpr, EVICT: tl.constexpr):
    """Elements start .. start + BLOCK of row `row` of a row-major (M, n) tensor (row 0 of a vector), widened to
    fp32 and 0 past the row's end, with their columns and mask; EVICT is the loads' L2 eviction hint ("": none)."""
    cols = start + tl.arange(0, BLOCK)
    mask = cols < n
    return tl.load(ptr + row * n + cols, mask=mask, other=0.0, eviction_policy=EVICT).to(tl.float32), cols, mask


@triton.jit
def load_tile(ptr, row, n, start, BLOCK: tl.constexpr):
    """load_tile_hinted without a hint. (A string default of a jit function's parameter reaches the compiler as a
    str, not a constexpr, and fails to compile on Triton 3.6; the interpreter takes it.)"""
    return load_tile_hinted(ptr, row, n, start, BLOCK, "")


@triton.jit
def layernorm_forward_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # int64: M·N may exceed 2^31
    # Two passes for the statistics: the mean, then the squared deviations from it. One pass of Σx and Σx² would
    # lose the variance to cancellation on rows far from zero (specs/_norm.py, "large offset").
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += load_tile(x_ptr, row, n, start, BLOCK)[0]
    mean = tl.sum(acc, axis=0) / n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    for start in range(0, n, BLOCK):
        x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
        w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
        b = load_tile(b_ptr, 0, n, start, BLOCK)[0]
        tl.store(y_ptr + row * n + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def layernorm_backward_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr, m, n,
                              BLOCK: tl.constexpr):
    # Program g takes rows g, g + G, g + 2G, ... and keeps their dy·x̂ and dy in row g of the partial buffers.
    g = tl.program_id(0).to(tl.int64)
    programs = tl.num_programs(0)
    for row in range(g, m, programs):
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        # dx = rstd·(w·dy - mean(w·dy) - x̂·mean(w·dy·x̂)): two sums over the row first.
        sum_wdy = tl.zeros([BLOCK], dtype=tl.float32)
        sum_wdy_xhat = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n, BLOCK):
            x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
            dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
            w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
            xhat = tl.where(mask, (x - mean) * rstd, 0.0)
            sum_wdy += w * dy
            sum_wdy_xhat += w * dy * xhat
        c_wdy = tl.sum(sum_wdy, axis=0) / n
        c_wdy_xhat = tl.sum(sum_wdy_xhat, axis=0) / n
        for start in range(0, n, BLOCK):
            x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
            dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
            w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
            xhat = tl.where(mask, (x - mean) * rstd, 0.0)
            dx = (w * dy - c_wdy - xhat * c_wdy_xhat) * rstd
            tl.store(dx_ptr + row * n + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
            # The program's first row stores, later ones add: the buffer needs no zeroing between calls.
            later = row != g
            dw_old = tl.load(dw_part_ptr + g * n + cols, mask=mask & later, other=0.0)
            db_old = tl.load(db_part_ptr + g * n + cols, mask=mask & later, other=0.0)
            tl.store(dw_part_ptr + g * n + cols, dw_old + dy * xhat, mask=mask)
            tl.store(db_part_ptr + g * n + cols, db_old + dy, mask=mask)


# The second stage of every backward here: out[k, c] = Σ_r part[k, r, c] over the G partial rows, for each of the
# gradients k summed across rows (LayerNorm's dweight and dbias: one launch for both, since a launch costs the host
# more than this kernel costs the GPU at every bench shape). Each program takes SUM_COLS columns of one gradient and
# walks the rows SUM_ROWS at a time as one [SUM_ROWS, SUM_COLS] tile, so that N / SUM_COLS programs share the work
# (a program per 256 columns walking one row at a time left N = 1024 to four programs, each waiting on hundreds of
# loads in a row). The tile is 16 KB of loads in flight per step, over SUM_WARPS warps: with 8 KB over four warps,
# ncu found this kernel using a small part of the memory's bandwidth, with few warps resident to wait on loads
# (results/nvidia-h100-80gb-hbm3/layernorm-backward-profile.md). Where there are fewer partial rows than SUM_ROWS (the
# exchange steps' 8-32 groups), the tile keeps its 16 KB by taking the rows there are and more columns (sum_tile):
# with 8 partial rows a [128, 32] tile loads 1/16 of what it spans, and ncu found v12's sum of 8 and 16 partial rows
# far from DRAM's bandwidth (results/nvidia-h100-80gb-hbm3/norm-long-rows-ncu/, before this tile; its first timing,
# host-bound: results/nvidia-h100-80gb-hbm3/norm-backward-few-partials/).
SUM_ROWS, SUM_COLS, SUM_WARPS = 128, 32, 8


def sum_tile(rows: int) -> tuple[int, int]:
    """(ROWS, BLOCK) of sum_partials_kernel for `rows` partial rows: at most SUM_ROWS rows, SUM_ROWS · SUM_COLS
    elements."""
    fitted = min(SUM_ROWS, triton.next_power_of_2(max(rows, 1)))
    return fitted, SUM_ROWS * SUM_COLS // fitted


@triton.jit
def sum_partials_kernel(part_ptr, out_ptr, rows, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    which = tl.program_id(1).to(tl.int64)  # the gradient: its (G, N) partial rows and its output row
    part_ptr += which * rows * n
    out_ptr += which * n
    cols = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    col_ok = (cols < n)[None, :]
    acc = tl.zeros([ROWS, BLOCK], dtype=tl.float32)
    for start in range(0, rows, ROWS):
        r = start + tl.arange(0, ROWS)
        acc += tl.load(part_ptr + r[:, None].to(tl.int64) * n + cols[None, :], mask=(r < rows)[:, None] & col_ok,
                       other=0.0)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty), mask=cols < n)


def sum_partials(part: torch.Tensor, out: torch.Tensor, via=as_written) -> None:
    """out (K, N; any float dtype) = the column sums of each of part's K (G, N) fp32 buffers, in one launch."""
    count, rows, n = part.shape
    tile_rows, tile_cols = sum_tile(rows)
    via(sum_partials_kernel)[(triton_src.cdiv(n, tile_cols), count)](part, out, rows, n, ROWS=tile_rows,
                                                                     BLOCK=tile_cols, num_warps=SUM_WARPS)


def _check(x, weight, *others, grad=None):
    named = [("x", x), ("weight", weight), *others]
    if grad is not None:
        named.insert(0, ("dy", grad))
    check_inputs("layernorm", *named)
    if x.dim() != 2:
        raise InputError(f"layernorm: x has {x.dim()} dimensions (shape {tuple(x.shape)}); expected 2 (M, N)")
    for name, t in [*others[:1], ("weight", weight)]:
        if t.dim() != 1 or t.shape[0] != x.shape[1]:
            raise InputError(f"layernorm: {name} has shape {tuple(t.shape)}; expected ({x.shape[1]},), one per "
                             f"column of x")
    if grad is not None and grad.shape != x.shape:
        raise InputError(f"layernorm: dy has shape {tuple(grad.shape)}, x {tuple(x.shape)}; they must match")


def sm_count(device: torch.device) -> int:
    """Multiprocessors to fill; on the interpreter, counting one keeps it quick."""
    return triton_src.sm_count(device, on_interpreter=1)


def partial_sums(programs: int, n: int, device: torch.device, count: int) -> torch.Tensor:
    """A (count, programs, N) fp32 buffer of partial sums: for each gradient summed across rows, one row per program
    of a backward (one allocation for all of them: each costs the host a few microseconds per call)."""
    return torch.empty((count, programs, n), device=device, dtype=torch.float32)


def row_statistics(m: int, device: torch.device, count: int) -> torch.Tensor:
    """A (count, M) fp32 buffer for what a forward saves per row (LayerNorm: mean and rstd), one allocation."""
    return torch.empty((count, m), device=device, dtype=torch.float32)


# Each step's launchers take inputs already checked: the row checks them once, not again for every step they are
# handed down through.
def _basic(x, weight, bias, via=as_written):
    m, n = x.shape
    y = torch.empty_like(x)
    mean, rstd = row_statistics(m, x.device, 2)
    if m and n:
        via(layernorm_forward_kernel)[(m,)](x, weight, bias, y, mean, rstd, n, EPS, BLOCK=_tile(n))
    return y, mean, rstd


def _basic_backward(dy, x, weight, bias, mean, rstd, via=as_written):
    m, n = x.shape
    dx = torch.empty_like(x)
    grads = torch.empty((2, n), device=x.device, dtype=weight.dtype)  # dweight and dbias
    if not (m and n):
        return dx, grads[0].zero_(), grads[1].zero_()
    # Enough programs to fill the GPU a few times over, each adding its rows into its own partial row.
    programs = min(m, 4 * sm_count(x.device))
    part = partial_sums(programs, n, x.device, 2)
    via(layernorm_backward_kernel)[(programs,)](dy, x, weight, mean, rstd, dx, part[0], part[1], m, n,
                                                BLOCK=_tile(n))
    sum_partials(part, grads, via)
    return dx, grads[0], grads[1]


@variant("basic")
def basic(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _basic(x, weight, bias)


@backward("basic")
def basic_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _basic_backward(dy, x, weight, bias, mean, rstd)


# ---- fused: the row held whole in registers, read once. ------------------------------------------------------------
# A row of up to MAX_FUSED_COLS elements is loaded once, widened to fp32, and kept in registers while its mean, then
# its variance (two sums over values already held: the two-pass variance costs no second read), then its output are
# computed. Short rows go several to a program as one [ROWS, BLOCK] tile reduced along axis 1, so a program moves at
# least FUSED_TILE_BYTES of x (a row of 1024 fp32 elements alone is 4 KB: too little in flight per program).
# Warps per program are autotuned per (M, N, dtype), among those giving each thread 4 to 64 values of the tile
# (fewer leaves lanes idle; more spills registers).
MAX_FUSED_COLS = 65536
FUSED_TILE_BYTES = 16384


def warps_worth_trying(configs, named_args, **kwargs):
    """The autotuner's prune: warp counts giving each thread 4 to VALUES values of the [ROWS, BLOCK] tile."""
    tile = kwargs.get("ROWS", 1) * kwargs["BLOCK"]
    kept = [c for c in configs if 4 <= tile // (32 * c.num_warps) <= kwargs["VALUES"]]
    return kept or configs[-1:]


WARP_CONFIGS = [triton.Config({}, num_warps=w) for w in (4, 8, 16, 32)]


@triton.jit
def layernorm_rows(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, m, n, eps, ROWS: tl.constexpr,
                   BLOCK: tl.constexpr):
    """ROWS whole rows from the program's index on, each held in registers: its mean, variance and output."""
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    col_ok = (cols < n)[None, :]
    row_ok = rows < m
    offsets = rows[:, None] * n + cols[None, :]
    mask = row_ok[:, None] & col_ok
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)  # rows past M: zeros, never stored
    mean = tl.sum(x, axis=1) / n
    d = tl.where(col_ok, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / n + eps)
    w = tl.load(w_ptr + cols, mask=cols < n, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=cols < n, other=0.0).to(tl.float32)
    y = d * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + rows, mean, mask=row_ok)
    tl.store(rstd_ptr + rows, rstd, mask=row_ok)


@triton.autotune(configs=WARP_CONFIGS, key=["m", "n"], prune_configs_by={"early_config_prune": warps_worth_trying})
@triton.jit
def layernorm_fused_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, m, n, eps, ROWS: tl.constexpr,
                           BLOCK: tl.constexpr, VALUES: tl.constexpr):
    layernorm_rows(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, m, n, eps, ROWS, BLOCK)


def fused_tile(x: torch.Tensor) -> tuple[int, int]:
    """(ROWS, BLOCK) of a fused forward's program: BLOCK the row rounded up to a power of two, ROWS enough rows for
    FUSED_TILE_BYTES."""
    block = triton_src.next_power_of_2(x.shape[1])
    return max(1, FUSED_TILE_BYTES // (block * x.element_size())), block


def launch_rows(kernel, x, weight, bias, via=as_written, **meta):
    """y, mean and rstd of x from a kernel over layernorm_rows (v2's or v5's), its programs fused_tile's."""
    m, n = x.shape
    y = torch.empty_like(x)
    mean, rstd = row_statistics(m, x.device, 2)
    rows, block = fused_tile(x)
    via(kernel)[(triton_src.cdiv(m, rows),)](x, weight, bias, y, mean, rstd, m, n, EPS, ROWS=rows, BLOCK=block, **meta)
    return y, mean, rstd


def _fused(x, weight, bias, via=as_written):
    m, n = x.shape
    if n > MAX_FUSED_COLS or not (m and n):
        return _basic(x, weight, bias, via)
    return launch_rows(layernorm_fused_kernel, x, weight, bias, via, VALUES=64)


# The fused backward: program g takes the contiguous rows g·R .. (g+1)·R - 1 (R = ceil(M / G)) and keeps each whole
# in registers (x, dy and the weight, read once), so both sums for dx come from values held; its dweight and dbias
# sums stay in registers across its rows too, and the program writes its partial row once, at the end, where v1
# read and wrote it back for every row. That holds five N-element fp32 vectors per program (x, dy, w and the two
# sums): rows of up to MAX_FUSED_BACKWARD_COLS, 32 values per thread of each at 32 warps.
# G = FUSED_PROGRAMS_PER_SM programs per multiprocessor: the partial rows are G·N fp32 written and read again,
# against 3·M·N elements of x, dy and dx, so fewer programs move fewer bytes; two per multiprocessor lets one
# program's loads overlap the other's reductions.
MAX_FUSED_BACKWARD_COLS = 32768
FUSED_PROGRAMS_PER_SM = 2


@triton.autotune(configs=WARP_CONFIGS, key=["m", "n"], prune_configs_by={"early_config_prune": warps_worth_trying})
@triton.jit
def layernorm_fused_backward_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr, m, n,
                                    rows_per_program, BLOCK: tl.constexpr, VALUES: tl.constexpr,
                                    PREFETCH: tl.constexpr):
    g = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    db = tl.zeros([BLOCK], dtype=tl.float32)
    first = g * rows_per_program
    last = tl.minimum(first + rows_per_program, m)
    if PREFETCH:  # v3: the first row's loads before the loop, each next row's before this row's reductions
        x_next = tl.load(x_ptr + first * n + cols, mask=mask & (first < last), other=0.0)
        dy_next = tl.load(dy_ptr + first * n + cols, mask=mask & (first < last), other=0.0)
    for row in range(first, last):
        if PREFETCH:
            x, dy = x_next.to(tl.float32), dy_next.to(tl.float32)
            x_next = tl.load(x_ptr + (row + 1) * n + cols, mask=mask & (row + 1 < last), other=0.0)
            dy_next = tl.load(dy_ptr + (row + 1) * n + cols, mask=mask & (row + 1 < last), other=0.0)
        else:
            x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        wdy = w * dy
        c_wdy = tl.sum(wdy, axis=0) / n
        c_wdy_xhat = tl.sum(wdy * xhat, axis=0) / n
        tl.store(dx_ptr + row * n + cols, ((wdy - c_wdy - xhat * c_wdy_xhat) * rstd).to(dx_ptr.dtype.element_ty),
                 mask=mask)
        dw += dy * xhat
        db += dy
    tl.store(dw_part_ptr + g * n + cols, dw, mask=mask)  # a program with no rows writes zeros
    tl.store(db_part_ptr + g * n + cols, db, mask=mask)


def row_groups(m: int, wanted: int) -> tuple[int, int]:
    """M rows in at most `wanted` (at least 1, at most M) contiguous groups of equal size but the last: (groups,
    rows per group)."""
    rows_per_group = triton_src.cdiv(m, min(m, max(1, wanted)))
    return triton_src.cdiv(m, rows_per_group), rows_per_group


def fused_backward_programs(m: int, device: torch.device) -> tuple[int, int]:
    """(G, rows per program) of a fused backward."""
    return row_groups(m, FUSED_PROGRAMS_PER_SM * sm_count(device))


def _launch_fused_backward(dy, x, weight, bias, mean, rstd, prefetch: bool, via=as_written):
    m, n = x.shape
    dx = torch.empty_like(x)
    grads = torch.empty((2, n), device=x.device, dtype=weight.dtype)  # dweight and dbias
    programs, rows_per_program = fused_backward_programs(m, x.device)
    part = partial_sums(programs, n, x.device, 2)
    via(layernorm_fused_backward_kernel)[(programs,)](dy, x, weight, mean, rstd, dx, part[0], part[1], m, n,
                                                      rows_per_program, BLOCK=triton_src.next_power_of_2(n),
                                                      VALUES=PREFETCH_VALUES if prefetch else 32, PREFETCH=prefetch)
    sum_partials(part, grads, via)
    return dx, grads[0], grads[1]


def _fused_backward(dy, x, weight, bias, mean, rstd, via=as_written):
    m, n = x.shape
    if n > MAX_FUSED_BACKWARD_COLS or not (m and n):
        return _basic_backward(dy, x, weight, bias, mean, rstd, via)
    return _launch_fused_backward(dy, x, weight, bias, mean, rstd, False, via)


@variant("fused")
def fused(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _fused(x, weight, bias)


@backward("fused")
def fused_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _fused_backward(dy, x, weight, bias, mean, rstd)


# ---- prefetch: the backward loads its next row before it reduces this one. ----------------------------------------
# v2's backward program waits on each row's loads, then reduces the row (two block-wide sums, each a barrier), then
# stores: while it reduces, nothing of its own is in flight, and with two programs per multiprocessor that leaves
# HBM idle much of the time. v3 issues the next row's loads of x and dy (kept in the input dtype until used) before
# this row's reductions, so they travel while this row is reduced. The cost is those two vectors' registers: rows
# of up to MAX_PREFETCH_COLS (at most 16 values of each vector per thread); longer rows go to v2. At 16K (16
# values a thread at 32 warps, where a thread has 64 registers for the two rows of x and dy and its dweight and
# dbias sums) this path took longer than v2 in both norms, every dtype, on the H100 and the H200
# (results/<gpu>/layernorm-backward.md and rmsnorm-backward.md, the prefetch and fused rows at N = 16384: H100 at
# a43cc19, H200 at 02ae7ed in the file's history), so it stops at 8K (level with v2 there since: H200 at a430eec).
# The forward is v2's: a forward program reduces a single tile, and the programs resident beside it keep loads in
# flight.
MAX_PREFETCH_COLS = 8192
PREFETCH_VALUES = 16


def _prefetch_backward(dy, x, weight, bias, mean, rstd, via=as_written):
    m, n = x.shape
    if n > MAX_PREFETCH_COLS or not (m and n):
        return _fused_backward(dy, x, weight, bias, mean, rstd, via)
    return _launch_fused_backward(dy, x, weight, bias, mean, rstd, True, via)


@variant("prefetch")
def prefetch(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _fused(x, weight, bias)


@backward("prefetch")
def prefetch_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _prefetch_backward(dy, x, weight, bias, mean, rstd)


# ---- split: a long row's backward shared by several programs. ------------------------------------------------------
# Past SPLIT_AFTER_COLS the backward's row went to v2 (the row whole in one program, up to 32K: few programs, few
# loads in flight) or to v1 (one program per row, each writing a whole partial row for every row it takes: at a few
# hundred rows of 64K, more partial sums than x, dy and dx together; results/nvidia-h100-80gb-hbm3/
# layernorm-backward-profile.md). v4 cuts each row into SPLIT_COLS-element chunks, so that programs share a row:
#   1. layernorm_split_sums_kernel, one program per (row, chunk): the chunk's parts of the row's two sums
#      (Σ w·dy·x̂, Σ w·dy), into an (M, chunks, 2) fp32 buffer;
#   2. layernorm_split_backward_kernel, one program per (chunk, group of rows): for each row of its group it adds
#      the row's chunk sums (the same values in the same order in every program of the row, so the same bits),
#      writes dx for its chunk, and keeps dweight and dbias of its chunk's columns in registers across the group,
#      writing one partial row per group; the groups are as many as fill the GPU SPLIT_PROGRAMS_PER_SM times over.
# Each row is read twice, once per kernel: the second launch is the barrier between the row's sums and its dx,
# since Triton's programs cannot wait for each other. CUDA's v5 keeps one read by passing a row's sums between the
# blocks of a cluster (cuda_src/layernorm.cu).
SPLIT_AFTER_COLS = 16384  # v4 takes rows longer than this; shorter ones go to v3 (and past 8K on to v2)
SPLIT_COLS = 4096
SPLIT_WARPS = 8  # 16 values of each [SPLIT_COLS] vector per thread
SPLIT_PROGRAMS_PER_SM = 2


@triton.jit
def layernorm_split_sums_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, sums_ptr, n, chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    x, cols, mask = load_tile(x_ptr, row, n, chunk * BLOCK, BLOCK)
    dy = load_tile(dy_ptr, row, n, chunk * BLOCK, BLOCK)[0]
    w = load_tile(w_ptr, 0, n, chunk * BLOCK, BLOCK)[0]
    xhat = tl.where(mask, (x - tl.load(mean_ptr + row)) * tl.load(rstd_ptr + row), 0.0)
    wdy = w * dy
    out = sums_ptr + (row * chunks + chunk) * 2
    tl.store(out, tl.sum(wdy * xhat, axis=0))
    tl.store(out + 1, tl.sum(wdy, axis=0))


@triton.jit
def layernorm_split_backward_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, sums_ptr, dx_ptr, dw_part_ptr,
                                    db_part_ptr, m, n, chunks, rows_per_program, BLOCK: tl.constexpr,
                                    CHUNKS: tl.constexpr):
    chunk = tl.program_id(0)
    g = tl.program_id(1).to(tl.int64)
    start = chunk * BLOCK
    w, cols, mask = load_tile(w_ptr, 0, n, start, BLOCK)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    db = tl.zeros([BLOCK], dtype=tl.float32)
    which = tl.arange(0, CHUNKS)
    first = g * rows_per_program
    last = tl.minimum(first + rows_per_program, m)
    for row in range(first, last):
        row_sums = sums_ptr + (row * chunks + which) * 2
        c_wdy_xhat = tl.sum(tl.load(row_sums, mask=which < chunks, other=0.0), axis=0) / n
        c_wdy = tl.sum(tl.load(row_sums + 1, mask=which < chunks, other=0.0), axis=0) / n
        x = load_tile(x_ptr, row, n, start, BLOCK)[0]
        dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
        rstd = tl.load(rstd_ptr + row)
        xhat = tl.where(mask, (x - tl.load(mean_ptr + row)) * rstd, 0.0)
        tl.store(dx_ptr + row * n + cols, ((w * dy - c_wdy - xhat * c_wdy_xhat) * rstd).to(dx_ptr.dtype.element_ty),
                 mask=mask)
        dw += dy * xhat
        db += dy
    tl.store(dw_part_ptr + g * n + cols, dw, mask=mask)  # a group with no rows writes zeros
    tl.store(db_part_ptr + g * n + cols, db, mask=mask)


def split_programs(m: int, chunks: int, device: torch.device) -> tuple[int, int]:
    """(groups of rows, rows per group) of a split backward: chunks · groups programs fill the GPU
    SPLIT_PROGRAMS_PER_SM times over, and each group writes one partial row."""
    return row_groups(m, triton_src.cdiv(SPLIT_PROGRAMS_PER_SM * sm_count(device), chunks))


def _split_backward(dy, x, weight, bias, mean, rstd, via=as_written):
    m, n = x.shape
    if n <= SPLIT_AFTER_COLS or not (m and n):
        return _prefetch_backward(dy, x, weight, bias, mean, rstd, via)
    chunks = triton_src.cdiv(n, SPLIT_COLS)
    sums = torch.empty((m, chunks, 2), device=x.device, dtype=torch.float32)
    via(layernorm_split_sums_kernel)[(m, chunks)](dy, x, weight, mean, rstd, sums, n, chunks, BLOCK=SPLIT_COLS,
                                                  num_warps=SPLIT_WARPS)
    groups, rows_per_program = split_programs(m, chunks, x.device)
    dx = torch.empty_like(x)
    grads = torch.empty((2, n), device=x.device, dtype=weight.dtype)  # dweight and dbias
    part = partial_sums(groups, n, x.device, 2)
    via(layernorm_split_backward_kernel)[(chunks, groups)](
        dy, x, weight, mean, rstd, sums, dx, part[0], part[1], m, n, chunks, rows_per_program, BLOCK=SPLIT_COLS,
        CHUNKS=triton_src.next_power_of_2(chunks), num_warps=SPLIT_WARPS)
    sum_partials(part, grads, via)
    return dx, grads[0], grads[1]


@variant("split")
def split(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _fused(x, weight, bias)


@backward("split")
def split_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _split_backward(dy, x, weight, bias, mean, rstd)


# ---- occupancy: two forward programs to a multiprocessor. ---------------------------------------------------------
# v2's forward holds a row of 8K-16K elements whole in one program, and the compiler spends registers freely on it:
# at N = 16K about 101 registers a thread at 16 warps and 53 at 32 (cuobjdump -res-usage of the sm_90 cubins,
# Triton 3.6), so whatever the warps the autotuner picks, one program an SM. That program loads its row, then
# reduces it, then stores it, and nothing else on the SM has loads in flight meanwhile: an fp16/bf16 row of 16K is
# 32 KB, too little to keep the memory busy (v2 trails CUDA there: results/<gpu>/layernorm.md). CUDA's v6 makes the
# same trade in its backward (cuda_src/layernorm.cu): fewer registers, two blocks to a multiprocessor.
# v5 runs v2's rows (layernorm_rows) with the registers capped (Triton's maxnreg) at what two programs of its warps
# can share, 65536 / (2 · 32 · warps), and lets the autotuner choose between 16 warps at 64 registers and 32 at 32.
# The compiler spills a few values a thread to fit (the kernel table of results/<gpu>/layernorm.md). Shorter rows
# already fit two programs or more; at longer ones the row alone needs more registers than the cap leaves, so both
# go to v2. In fp32 a 16K row is 64 KB, enough in flight for one program an SM on an H100, where v5's spills make
# it slower than v2; on an H200 it is faster (results/<gpu>/layernorm.md at commit a43cc19).
OCCUPANCY_COLS = (8193, 16384)
REGISTERS_PER_SM, PROGRAMS_PER_SM = 65536, 2
TWO_PROGRAMS_AN_SM = [triton.Config({}, num_warps=w, maxnreg=REGISTERS_PER_SM // (PROGRAMS_PER_SM * 32 * w))
                      for w in (16, 32)]


@triton.autotune(configs=TWO_PROGRAMS_AN_SM, key=["m", "n"])
@triton.jit
def layernorm_occupancy_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, m, n, eps, ROWS: tl.constexpr,
                               BLOCK: tl.constexpr):
    layernorm_rows(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, m, n, eps, ROWS, BLOCK)


def _occupancy(x, weight, bias, via=as_written):
    m, n = x.shape
    if not (OCCUPANCY_COLS[0] <= n <= OCCUPANCY_COLS[1] and m):
        return _fused(x, weight, bias, via)
    return launch_rows(layernorm_occupancy_kernel, x, weight, bias, via)


@variant("occupancy")
def occupancy(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _occupancy(x, weight, bias)


@backward("occupancy")
def occupancy_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _split_backward(dy, x, weight, bias, mean, rstd)


# ---- direct: v5's launches without Triton's per-call Python. -------------------------------------------------------
# A forward is one launch and a backward three (v4's sums and dx kernels, then the column sums), and before each
# Triton binds the arguments, works out their specialization and, for the autotuned kernels, a tuning key: tens of
# microseconds of Python a launch, more on a slow host than the kernels take at most bench shapes (the `host`
# column and the `h` cells of results/<gpu>/layernorm.md and -backward.md). v6 sends the same launches through
# triton_src.launcher, which does that work once per specialization (triton_src/softmax.py's v6 says how).
@variant("direct")
def direct(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _occupancy(x, weight, bias, triton_src.launcher)


@backward("direct")
def direct_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _split_backward(dy, x, weight, bias, mean, rstd, triton_src.launcher)


# ---- reread: long rows in tiles again, the second read from L2. ----------------------------------------------------
# v2 holds a row whole in one program of 16 or 32 warps: at 64K, 64 values a thread at 32 warps, a program loads its
# row, then reduces it, then stores it, with nothing else on its SM loading meanwhile, and 256 rows are under two
# programs an SM. torch.compile's LayerNorm and RMSNorm are v1's shape there, a loop over tiles reading the row once per
# pass (its code: results/<gpu>/inductor/ and inductor-norms-*/): a program holds one tile, several programs share an
# SM, and the row's second read comes from L2. v7 is v1 with what makes that work:
#   - one pass for the statistics, not two: each tile's mean and squared deviations from it (two sums over values
#     held, as v2 does for a whole row), merged into the row's by Chan's update, which is as exact as v1's two
#     passes on rows far from zero (specs/_norm.py, "large offset") and reads the row once, not twice;
#   - the first read's loads hint evict_last, the second's evict_first: the row stays in L2 between its reads and
#     leaves it once written;
#   - the tile and the warps autotuned per (M, N, dtype) among REREAD_CONFIGS (8 to 16 values of a tile a thread).
# It takes rows past REREAD_AFTER_COLS. Measured taking rows past 4K (results/nvidia-h200/norm-forward-reread/, at
# ae48eb4): at 64K ahead of v6 in both norms and both dtypes, at 8K-32K level or behind, and there v7 and v8, whose
# kernels differ only in the order of the second pass, differ by more than that order can explain (at 8K, where L2 holds
# every row in flight), as does v8 between that run and the next (norm-forward-persistent/, at e2f18e7): its figures
# there are not stable from run to run (whether the autotuner's pick differs was not recorded). At 1024 rows of 32K
# fp32, ncu found v7 at two 32-warp programs an SM moving more bytes from DRAM than torch.compile's loop at one, and
# taking longer (norm-forward-reread/ncu/). Shorter rows go to v6, launched the same way (triton_src.launcher).
REREAD_AFTER_COLS = 32768
REREAD_CONFIGS = [triton.Config({"BLOCK": block}, num_warps=warps)
                  for block, warps in ((2048, 8), (4096, 8), (4096, 16), (8192, 16), (8192, 32), (16384, 32))]


@triton.jit
def reread_tile_start(t, tiles, BLOCK: tl.constexpr, NEWEST_FIRST: tl.constexpr):
    """The first column of the second pass's t-th tile: from the row's start, or (v8) from its end."""
    if NEWEST_FIRST:
        return (tiles - 1 - t) * BLOCK
    return t * BLOCK


@triton.autotune(configs=REREAD_CONFIGS, key=["m", "n"])
@triton.jit
def layernorm_reread_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, m, n, eps, BLOCK: tl.constexpr,
                            NEWEST_FIRST: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    tiles = tl.cdiv(n, BLOCK)
    mean = 0.0
    m2 = 0.0  # Σ (x - mean)² over the tiles seen
    for t in range(0, tiles):
        x, cols, mask = load_tile_hinted(x_ptr, row, n, t * BLOCK, BLOCK, "evict_last")
        seen = t * BLOCK * 1.0
        count = tl.minimum(n - t * BLOCK, BLOCK) * 1.0
        tile_mean = tl.sum(x, axis=0) / count
        d = tl.where(mask, x - tile_mean, 0.0)
        delta = tile_mean - mean
        mean += delta * (count / (seen + count))
        m2 += tl.sum(d * d, axis=0) + delta * delta * (seen * count / (seen + count))
    rstd = 1.0 / tl.sqrt(m2 / n + eps)
    for t in range(0, tiles):
        start = reread_tile_start(t, tiles, BLOCK, NEWEST_FIRST)
        x, cols, mask = load_tile_hinted(x_ptr, row, n, start, BLOCK, "evict_first")
        w = load_tile_hinted(w_ptr, 0, n, start, BLOCK, "evict_last")[0]
        b = load_tile_hinted(b_ptr, 0, n, start, BLOCK, "evict_last")[0]
        tl.store(y_ptr + row * n + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


def _reread(x, weight, bias, via=as_written, kernel=layernorm_reread_kernel, **meta):
    """Rows past REREAD_AFTER_COLS through `kernel` (v7's or a later step's), one program a row; others to v5."""
    m, n = x.shape
    if n <= REREAD_AFTER_COLS or not m:
        return _occupancy(x, weight, bias, via)
    y = torch.empty_like(x)
    mean, rstd = row_statistics(m, x.device, 2)
    via(kernel)[(m,)](x, weight, bias, y, mean, rstd, m, n, EPS, **meta)
    return y, mean, rstd


@variant("reread")
def reread(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _reread(x, weight, bias, triton_src.launcher, NEWEST_FIRST=False)


@backward("reread")
def reread_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _split_backward(dy, x, weight, bias, mean, rstd, triton_src.launcher)


# ---- newest_first: v7, its second pass from the row's end. ---------------------------------------------------------
# v7's second pass re-reads a row from its start, the part read longest ago: where more rows are in flight than L2 holds
# (256 rows of 64K fp32, 256 KB each, against the H200's 50 MB), L2 has evicted the row's oldest tiles first. v8 walks
# the second pass from the row's end, its most recent tiles, so what L2 still holds of the row is read before it is
# evicted. Everything else is v7's. It bought most in LayerNorm fp32 at 64K, the cell with the most bytes in flight
# (results/nvidia-h200/norm-forward-reread/, at ae48eb4). Capping the rows in flight instead, one program an SM taking
# rows in turn (the rows between their reads then within L2), bought nothing on top of v8 (tried as a row at e2f18e7:
# results/nvidia-h200/norm-forward-persistent/).
@variant("newest_first")
def newest_first(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _reread(x, weight, bias, triton_src.launcher, NEWEST_FIRST=True)


@backward("newest_first")
def newest_first_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _split_backward(dy, x, weight, bias, mean, rstd, triton_src.launcher)


# ---- tile_ahead: two tiles in flight a thread, the statistics per lane. -------------------------------------------
# ncu of v8 at 256 x 65536 (results/nvidia-h200/norm-forward-64k-ncu/) finds its warps stalled mostly on their loads
# (long scoreboard), with DRAM far from busy: each pass loads a tile, then uses it, so a thread has one tile's loads
# in flight, and in the first pass every tile ends in two block-wide sums (barriers through shared memory) before
# the next tile's loads are issued. v9 changes both:
#   - each pass issues the next tile's loads before it uses the tile it has (a tile held in registers across the
#     loop, v3's prefetch at the scale of a tile), so a thread always has a tile's loads in flight;
#   - the first pass keeps a running mean and squared deviations per lane (Welford's update, one element a lane a
#     tile, as torch.compile's loop does: results/<gpu>/inductor/layernorm/), with no sum across the block inside
#     the loop; the lanes are merged once after it (the row's mean from the lanes', then each lane's squared
#     deviations plus its count times its mean's squared distance from the row's).
# Every lane in the mask of tile t has taken an element of each earlier tile (only the last tile is short), so its
# count is t + 1: one reciprocal a tile, not a division an element. Everything else (the eviction hints, the second
# pass from the row's end, the autotuned tile) is v8's. Measured against v8 and CUDA's v12 at 64K-128K
# (results/nvidia-h200/norm-forward-tile-ahead/, at cdd7a7b, taking v8's rows): ahead of v8 in both norms and
# dtypes but one cell, level with v12 in some 16-bit cells, behind it in the rest; under ncu its warps wait far less
# between issues, while the kernel's duration there was v8's (the two processes' autotuners picked different
# configs). Taking rows past 4K it was behind v5/v6 in LayerNorm at 8K-32K and level in RMSNorm
# (results/nvidia-h200/norm-forward-tile-ahead-8k/, at c27fcd0), so it takes v8's rows only (past REREAD_AFTER_COLS).


@triton.jit
def load_tile_ahead(ptr, row, n, start, BLOCK: tl.constexpr, EVICT: tl.constexpr):
    """load_tile_hinted for a tile that may lie before the row's start as well as past its end (the tile after a
    pass's last, from either end): masked off there, no memory touched."""
    cols = start + tl.arange(0, BLOCK)
    mask = (cols >= 0) & (cols < n)
    return tl.load(ptr + row * n + cols, mask=mask, other=0.0, eviction_policy=EVICT).to(tl.float32), cols, mask


@triton.autotune(configs=REREAD_CONFIGS, key=["m", "n"])
@triton.jit
def layernorm_tile_ahead_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, m, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    tiles = tl.cdiv(n, BLOCK)
    lane_mean = tl.zeros([BLOCK], dtype=tl.float32)
    lane_m2 = tl.zeros([BLOCK], dtype=tl.float32)  # Σ (x - lane mean)² over the lane's elements
    x_ahead, cols, mask_ahead = load_tile_ahead(x_ptr, row, n, 0, BLOCK, "evict_last")
    for t in range(0, tiles):
        x, mask = x_ahead, mask_ahead
        x_ahead, cols, mask_ahead = load_tile_ahead(x_ptr, row, n, (t + 1) * BLOCK, BLOCK, "evict_last")
        delta = x - lane_mean
        moved = lane_mean + delta * (1.0 / (t + 1))
        lane_m2 = tl.where(mask, lane_m2 + delta * (x - moved), lane_m2)
        lane_mean = tl.where(mask, moved, lane_mean)
    # Lanes short of the last tile's end took one element fewer.
    lane_count = (tiles - 1) * 1.0 + (tl.arange(0, BLOCK) < n - (tiles - 1) * BLOCK).to(tl.float32)
    mean = tl.sum(lane_count * lane_mean, axis=0) / n
    apart = lane_mean - mean
    rstd = 1.0 / tl.sqrt(tl.sum(lane_m2 + lane_count * apart * apart, axis=0) / n + eps)
    start = reread_tile_start(0, tiles, BLOCK, True)
    x_ahead, cols_ahead, mask_ahead = load_tile_ahead(x_ptr, row, n, start, BLOCK, "evict_first")
    w_ahead = load_tile_ahead(w_ptr, 0, n, start, BLOCK, "evict_last")[0]
    b_ahead = load_tile_ahead(b_ptr, 0, n, start, BLOCK, "evict_last")[0]
    for t in range(0, tiles):
        x, cols, mask, w, b = x_ahead, cols_ahead, mask_ahead, w_ahead, b_ahead
        start = reread_tile_start(t + 1, tiles, BLOCK, True)  # -BLOCK after the last: masked off
        x_ahead, cols_ahead, mask_ahead = load_tile_ahead(x_ptr, row, n, start, BLOCK, "evict_first")
        w_ahead = load_tile_ahead(w_ptr, 0, n, start, BLOCK, "evict_last")[0]
        b_ahead = load_tile_ahead(b_ptr, 0, n, start, BLOCK, "evict_last")[0]
        tl.store(y_ptr + row * n + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@variant("tile_ahead")
def tile_ahead(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _reread(x, weight, bias, triton_src.launcher, layernorm_tile_ahead_kernel)


@backward("tile_ahead")
def tile_ahead_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _split_backward(dy, x, weight, bias, mean, rstd, triton_src.launcher)


# ---- exchange: a long row's backward shared by programs that pass their sums to each other. -----------------------
# The backward's row needs two sums over all its columns before any of its dx, and its dweight and dbias sums are one
# value a column kept across the rows a program takes: x, dy, w and the two sums, five N-element fp32 vectors. A
# program of 32 warps holds them for rows of up to 8K (v2, v3); at 16K the compiler spills them (v2 at 16K is behind
# v3 at 8K in results/<gpu>/layernorm-backward.md), and v4 reads the row twice, once per kernel, because the second
# launch was its only barrier between a row's sums and its dx. CUDA's v10 keeps one read by splitting the row over
# the blocks of a cluster, which add their sums through distributed shared memory (cuda_src/layernorm.cu).
# Triton has no clusters, but programs that are all resident at once can wait for each other through L2. v10:
#   - each row is split over `parts` programs of EXCHANGE_COLS columns each; a group of `parts` programs (consecutive
#     program ids) takes a contiguous run of rows, each program its columns of every row, keeping its columns'
#     dweight and dbias in registers (v2's partial row, per group);
#   - a program publishes its columns' two sums of a row in the row's slots for it, each sum a 64-bit word whose high
#     half is a flag (a relaxed atomic exchange: no fence, nothing to wait for), and reads the row's words (volatile
#     loads, from L2) until every flag is set, adding the sums in one order, the same bits in every program of the
#     row (v4's rule); the slots are zeroed on every call, so nothing carries over between calls;
#   - a row's dx is written two rows late: the program reads row r - 2's slots (the loads in flight while it reduces
#     row r), publishes row r's sums, then adds row r - 2's, published by its partners two iterations ago, and
#     writes row r - 2's dx from x̂ and w·dy it kept in registers, so that a program seldom waits: its partners
#     published those sums an iteration or more before. A first version that waited for row r's sums before its
#     dx (a release atomic to count arrivals, an acquire loop on it) was behind v4 at 8K and little ahead of it past
#     8K (results/nvidia-h200/norm-backward-exchange/, at d68727d). This one is ahead of v4 in most fp32 cells past
#     8K and behind it in most 16-bit ones (results/<gpu>/layernorm-backward.md, at fbec4e7; its run at d8c0503
#     failed checks at 256 x 65536, exchange_slot_words says why);
#   - the next row's loads are issued before this row is reduced (v3's prefetch);
#   - the launch is cooperative (Triton's launch_cooperative_grid): the driver refuses a grid whose programs cannot
#     all be resident at once, where a plain launch could leave waiting programs holding every multiprocessor while
#     the programs they wait for never start. The grid is EXCHANGE_PROGRAMS_PER_SM programs an SM, each with its
#     registers capped to fit (maxnreg, as v5's forward does).
# Triton's interpreter runs programs one at a time, so a program there would wait forever for the next: under it,
# v10 takes only rows that one program holds (parts = 1; tests/test_kernels.py lowers the thresholds to reach it), and
# hands the rest to v4. Rows of EXCHANGE_AFTER_COLS or fewer go to v4's path as well (on to v3 and v2): at 8K, where
# v2/v3 hold a row in one program, the first version taking them was behind that path in both norms but RMSNorm bf16
# (level) (results/nvidia-h200/norm-backward-exchange/, at d68727d).
# Columns, warps and programs an SM are a first choice among 1K-8K columns at 8-32 warps, one to four programs an SM,
# timed outside the lab's tables; no other choice has run in them.
EXCHANGE_AFTER_COLS = 8192
EXCHANGE_COLS = 2048
EXCHANGE_WARPS = 8  # 8 values of each [EXCHANGE_COLS] vector a thread
EXCHANGE_PROGRAMS_PER_SM = 2


def exchange_launch(warps: int, programs_per_sm: int) -> dict:
    """An exchange kernel's launch options: cooperative, its registers capped so that `programs_per_sm` programs of
    `warps` warps fit an SM."""
    return dict(num_warps=warps, launch_cooperative_grid=True,
                maxnreg=min(255, REGISTERS_PER_SM // (programs_per_sm * 32 * warps)))


EXCHANGE_LAUNCH = exchange_launch(EXCHANGE_WARPS, EXCHANGE_PROGRAMS_PER_SM)
PUBLISHED = tl.constexpr(1 << 32)  # the flag of a slot's word, above its 32 bits of fp32 sum
EXCHANGE_LAG = 2  # rows between a row's sums and its dx (the kernels keep two rows' x̂ and w·dy; v12 one)


@triton.jit
def publish_sums(slots_ptr, row, part, parts, a, b, TWO: tl.constexpr):
    """This program's part (a, b) of a row's two sums (TWO; else a alone), into its slots of the row, each flagged as
    published."""
    slot = slots_ptr + (row * parts + part) * 2
    tl.atomic_xchg(slot, a.to(tl.uint32, bitcast=True).to(tl.int64) | PUBLISHED, sem="relaxed")
    if TWO:
        tl.atomic_xchg(slot + 1, b.to(tl.uint32, bitcast=True).to(tl.int64) | PUBLISHED, sem="relaxed")


@triton.jit
def read_slots(slots_ptr, row, parts, wanted, SLOTS: tl.constexpr, TWO: tl.constexpr):
    """A row's slots as they are now (where `wanted`; else words that read as published zeros): its parts' words
    of the first sum and (TWO) of the second, each a [SLOTS / 2] tile (exchange_slot_words), and the first's
    pointers and mask, for gather_sums. Without TWO the second tile is the first."""
    which = tl.arange(0, SLOTS // 2)
    words = slots_ptr + (row * parts + which) * 2
    present = (which < parts) & wanted
    # volatile: from L2 every time, never an L1 line of this multiprocessor
    got_a = tl.load(words, mask=present, other=PUBLISHED, volatile=True)
    got_b = got_a
    if TWO:
        got_b = tl.load(words + 1, mask=present, other=PUBLISHED, volatile=True)
    return got_a, got_b, words, present


@triton.jit
def word_sums(got):
    """The fp32 sums in the low halves of a tile of slot words."""
    return (got & 0xFFFFFFFF).to(tl.uint32).to(tl.float32, bitcast=True)


@triton.jit
def published_and_sums(flag_1, a_1, b_1, flag_2, a_2, b_2):
    """tl.reduce's combine of (published flag, sum, sum): published only where both were, the sums added."""
    return flag_1 & flag_2, a_1 + a_2, b_1 + b_2


@triton.jit
def lean_gather(got_a, got_b, TWO: tl.constexpr):
    """(every part published, first sum, second sum) of a row's words in one reduction across the program, the
    flags as 32-bit words; without TWO the second sum is the first's."""
    if TWO:
        flags = ((got_a & got_b) >> 32).to(tl.int32)
        return tl.reduce((flags, word_sums(got_a), word_sums(got_b)), 0, published_and_sums)
    else:
        published, a, _ = tl.reduce(((got_a >> 32).to(tl.int32), word_sums(got_a), word_sums(got_a)), 0,
                                    published_and_sums)
        return published, a, a


@triton.jit
def gathered(got_a, got_b, words, present, TWO: tl.constexpr):
    """(first sum, second sum, the first sum's words as last read) of a row over all the programs sharing it, from
    its words as read_slots read them, read again until every program has published its part: the check and the
    sums in one reduction a read (lean_gather); without TWO the second sum is the first's."""
    published, a, b = lean_gather(got_a, got_b, TWO)
    while published == 0:
        got_a = tl.load(words, mask=present, other=PUBLISHED, volatile=True)
        got_b = got_a
        if TWO:
            got_b = tl.load(words + 1, mask=present, other=PUBLISHED, volatile=True)
        published, a, b = lean_gather(got_a, got_b, TWO)
    return a, b, got_a


@triton.jit
def gather_sums(got_a, got_b, words, present, TWO: tl.constexpr, LEAN: tl.constexpr):
    """A row's two sums (TWO; else the first, twice) over all the programs sharing it, from its words as read_slots
    read them, read again until every program has published its part: a check of the flags (64-bit words), then
    each sum, or (LEAN, v12) the check and the sums in one reduction. (Triton 3.8 fails to compile a kernel that
    reads the second words in this loop and leaves their sum unused: hence TWO.)"""
    if LEAN:
        a, b, _ = gathered(got_a, got_b, words, present, TWO)
    elif TWO:
        while tl.minimum(tl.min(got_a >> 32, axis=0), tl.min(got_b >> 32, axis=0)) == 0:
            got_a = tl.load(words, mask=present, other=PUBLISHED, volatile=True)
            got_b = tl.load(words + 1, mask=present, other=PUBLISHED, volatile=True)
        a, b = tl.sum(word_sums(got_a), axis=0), tl.sum(word_sums(got_b), axis=0)
    else:
        while tl.min(got_a >> 32, axis=0) == 0:
            got_a = tl.load(words, mask=present, other=PUBLISHED, volatile=True)
        a = tl.sum(word_sums(got_a), axis=0)
        b = a
    return a, b


@triton.jit
def both_added(a_1, b_1, a_2, b_2):
    """tl.reduce's combine of two sums taken together."""
    return a_1 + a_2, b_1 + b_2


@triton.jit
def part_sums(a_terms, b_terms, LEAN: tl.constexpr):
    """Σ a_terms and Σ b_terms over a program's part of a row: two reductions across the program, or (LEAN) one of
    the pair."""
    if LEAN:
        return tl.reduce((a_terms, b_terms), 0, both_added)
    else:
        return tl.sum(a_terms, axis=0), tl.sum(b_terms, axis=0)


@triton.jit
def row_statistic(ptr, row, last, loaded, LEAN: tl.constexpr):
    """(a row's statistic, mean or rstd; the one to pass as `loaded` for the next row): loaded as the row starts
    (v10), or (LEAN, v12) a row ahead, `loaded` being the one the row before loaded, so that no row waits on a load
    of its own. Rows past the group's last read zeros."""
    if LEAN:
        return loaded, tl.load(ptr + row + 1, mask=row + 1 < last, other=0.0)
    else:
        return tl.load(ptr + row, mask=row < last, other=0.0), loaded


@triton.jit
def lagged(xhat_1, wdy_1, rstd_1, xhat_2, wdy_2, rstd_2, LAG: tl.constexpr):
    """The x̂, w·dy and rstd kept for the row LAG (1 or 2) rows back, whose dx is written now."""
    if LAG == 1:
        return xhat_1, wdy_1, rstd_1
    else:
        return xhat_2, wdy_2, rstd_2


@triton.jit
def recomputed(x_in, dy_in, w, mask, mean, rstd):
    """x̂ and w·dy of a row kept as it was loaded (v13), computed again for its dx."""
    return tl.where(mask, (x_in.to(tl.float32) - mean) * rstd, 0.0), w * dy_in.to(tl.float32)


@triton.jit
def rows_ahead(x_ptr, dy_ptr, n, cols, mask, row, last, x_1, dy_1, x_2, dy_2, AHEAD: tl.constexpr):
    """A row's x and dy (fp32) from the loads in flight, and the loads then in flight: rows row + 1 (x_1, dy_1) and,
    with AHEAD = 2, row + 2 (x_2, dy_2), each issued AHEAD rows before its row; rows past the group's last are
    masked off."""
    x, dy = x_1.to(tl.float32), dy_1.to(tl.float32)
    if AHEAD == 2:
        x_1, dy_1 = x_2, dy_2
        x_2 = tl.load(x_ptr + (row + 2) * n + cols, mask=mask & (row + 2 < last), other=0.0)
        dy_2 = tl.load(dy_ptr + (row + 2) * n + cols, mask=mask & (row + 2 < last), other=0.0)
    else:
        x_1 = tl.load(x_ptr + (row + 1) * n + cols, mask=mask & (row + 1 < last), other=0.0)
        dy_1 = tl.load(dy_ptr + (row + 1) * n + cols, mask=mask & (row + 1 < last), other=0.0)
    return x, dy, x_1, dy_1, x_2, dy_2


@triton.jit
def exchange_part(w_ptr, m, n, parts, rows_per_group, BLOCK: tl.constexpr):
    """This program's group of rows and part of their columns: (group, part, the weight's part with its columns and
    mask, the group's first row and the row past its last)."""
    program = tl.program_id(0)
    g = (program // parts).to(tl.int64)
    part = program % parts
    w, cols, mask = load_tile(w_ptr, 0, n, part * BLOCK, BLOCK)
    first = g * rows_per_group
    return g, part, w, cols, mask, first, tl.minimum(first + rows_per_group, m)


@triton.jit
def first_rows(x_ptr, dy_ptr, n, cols, mask, first, last):
    """The loads of a group's first two rows (the second's used only two rows ahead), masked off past its last."""
    x_1 = tl.load(x_ptr + first * n + cols, mask=mask & (first < last), other=0.0)
    dy_1 = tl.load(dy_ptr + first * n + cols, mask=mask & (first < last), other=0.0)
    x_2 = tl.load(x_ptr + (first + 1) * n + cols, mask=mask & (first + 1 < last), other=0.0)
    dy_2 = tl.load(dy_ptr + (first + 1) * n + cols, mask=mask & (first + 1 < last), other=0.0)
    return x_1, dy_1, x_2, dy_2


@triton.jit
def layernorm_exchange_backward_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr,
                                       slots_ptr, m, n, parts, rows_per_group, BLOCK: tl.constexpr,
                                       SLOTS: tl.constexpr, AHEAD: tl.constexpr, LEAN: tl.constexpr,
                                       LAG: tl.constexpr, AS_LOADED: tl.constexpr):
    g, part, w, cols, mask, first, last = exchange_part(w_ptr, m, n, parts, rows_per_group, BLOCK)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    db = tl.zeros([BLOCK], dtype=tl.float32)
    x_1, dy_1, x_2, dy_2 = first_rows(x_ptr, dy_ptr, n, cols, mask, first, last)
    mean_next = tl.load(mean_ptr + first, mask=first < last, other=0.0)  # the first row's statistics (LEAN's)
    rstd_next = tl.load(rstd_ptr + first, mask=first < last, other=0.0)
    # x̂, w·dy and rstd of the rows one and two before, kept for their dx (with LAG 1 the second pair goes unused)
    xhat_1, wdy_1, rstd_1 = tl.zeros([BLOCK], dtype=tl.float32), tl.zeros([BLOCK], dtype=tl.float32), 0.0
    xhat_2, wdy_2, rstd_2 = tl.zeros([BLOCK], dtype=tl.float32), tl.zeros([BLOCK], dtype=tl.float32), 0.0
    # (AS_LOADED, LAG 1) the row before as loaded, and its mean; zeros to start with, never x_1 and dy_1 themselves:
    # Triton's front end finds the names a loop carries by running its body once and keeping those whose value is no
    # longer the one they entered with, and a name entering as x_1 ends that run as x_1's entering value (x_in), so
    # it is taken as unchanged and every late row read as the group's first (v13's first GPU run, at 6e17942, wrote
    # wrong dx from each group's second row on; the interpreter runs the loop as Python and was right)
    x_in_1, dy_in_1, mean_1 = tl.zeros_like(x_1), tl.zeros_like(dy_1), 0.0
    for row in range(first, last + LAG):  # the last turns write the last rows' dx only
        late = row - LAG
        got_a, got_b, words, present = read_slots(slots_ptr, late, parts, late >= first, SLOTS, True)  # in flight
        x_in, dy_in = x_1, dy_1  # this row's loads, as they came
        x, dy, x_1, dy_1, x_2, dy_2 = rows_ahead(x_ptr, dy_ptr, n, cols, mask, row, last, x_1, dy_1, x_2, dy_2,
                                                 AHEAD)
        mean, mean_next = row_statistic(mean_ptr, row, last, mean_next, LEAN)
        rstd, rstd_next = row_statistic(rstd_ptr, row, last, rstd_next, LEAN)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        wdy = w * dy
        dw += dy * xhat  # zeros on the last turns
        db += dy
        if row < last:
            s_wdy_xhat, s_wdy = part_sums(wdy * xhat, wdy, LEAN)
            publish_sums(slots_ptr, row, part, parts, s_wdy_xhat, s_wdy, True)
        if late >= first:
            s_wdy_xhat, s_wdy = gather_sums(got_a, got_b, words, present, True, LEAN)
            if AS_LOADED:
                xhat_l, wdy_l = recomputed(x_in_1, dy_in_1, w, mask, mean_1, rstd_1)
                rstd_l = rstd_1
            else:
                xhat_l, wdy_l, rstd_l = lagged(xhat_1, wdy_1, rstd_1, xhat_2, wdy_2, rstd_2, LAG)
            tl.store(dx_ptr + late * n + cols,
                     ((wdy_l - s_wdy / n - xhat_l * (s_wdy_xhat / n)) * rstd_l).to(dx_ptr.dtype.element_ty),
                     mask=mask)
        xhat_2, wdy_2, rstd_2 = xhat_1, wdy_1, rstd_1
        xhat_1, wdy_1, rstd_1 = xhat, wdy, rstd
        x_in_1, dy_in_1, mean_1 = x_in, dy_in, mean
    tl.store(dw_part_ptr + g * n + cols, dw, mask=mask)  # a group with no rows writes zeros
    tl.store(db_part_ptr + g * n + cols, db, mask=mask)


def exchange_programs(x: torch.Tensor, after_cols: int | None = None,
                      part_cols: int | None = None) -> tuple[int, int, int] | None:
    """(parts a row, groups of rows, rows a group) of an exchange kernel over x, parts of `part_cols` columns
    (default EXCHANGE_COLS), or None where it does not take x: rows of `after_cols` (default EXCHANGE_AFTER_COLS,
    the backward's) or fewer, rows longer than the resident programs cover, or, under Triton's interpreter, rows
    that more than one program shares."""
    m, n = x.shape
    if n <= (EXCHANGE_AFTER_COLS if after_cols is None else after_cols) or not m:
        return None
    parts = triton_src.cdiv(n, EXCHANGE_COLS if part_cols is None else part_cols)
    resident = EXCHANGE_PROGRAMS_PER_SM * sm_count(x.device)
    if parts > resident or (parts > 1 and not triton_src.runs_ptx(x)):
        return None
    groups, rows_per_group = row_groups(m, resident // parts)
    return parts, groups, rows_per_group


def exchange_slot_words(parts: int) -> int:
    """SLOTS, twice the words of each tile a program reads a row's slots in (read_slots): a tile of at least `parts`
    words and at least the program's threads, so that no word is held by two threads. Where a tile has fewer
    elements than its layout covers (its threads times the words a thread loads at once), Triton holds an element in
    several threads, each loading it at its own moment: one could see a part published and another not, and a
    reduction across the tile then takes some elements from one thread and some from another, so the check that
    every part is published and the sum of the parts could read different copies. A [parts, 2] tile of 32 parts at
    8 warps wrote wrong dx in a few rows of 256 x 65536 (results/nvidia-h200/norm-backward-exchange-late/, at
    d8c0503)."""
    return max(triton_src.next_power_of_2(2 * parts), 2 * 32 * EXCHANGE_WARPS)


def exchange_meta(parts: int, ahead: int, lean: bool, as_loaded: bool = False) -> dict:
    """The launch parameters of an exchange kernel (either norm's) for rows of `parts` parts, loaded `ahead` rows
    ahead, (lean) with v12's reductions, statistics and lag, (as_loaded, lean only) the late row kept as loaded."""
    if as_loaded and not lean:
        raise ValueError("as_loaded keeps one late row as it was loaded: it needs lean's lag of one row")
    return dict(BLOCK=EXCHANGE_COLS, SLOTS=exchange_slot_words(parts), AHEAD=ahead, LEAN=lean,
                LAG=1 if lean else EXCHANGE_LAG, AS_LOADED=as_loaded, **EXCHANGE_LAUNCH)


def exchange_slots(m: int, parts: int, device: torch.device) -> torch.Tensor:
    """The (M, parts, 2) 64-bit slots of the rows' sums, zeroed (none published)."""
    return torch.zeros((m, parts, 2), device=device, dtype=torch.int64)


def _exchange_backward(dy, x, weight, bias, mean, rstd, via=as_written, ahead=1, lean=False, as_loaded=False):
    programs = exchange_programs(x)
    if programs is None:
        return _split_backward(dy, x, weight, bias, mean, rstd, via)
    parts, groups, rows_per_group = programs
    m, n = x.shape
    dx = torch.empty_like(x)
    grads = torch.empty((2, n), device=x.device, dtype=weight.dtype)  # dweight and dbias
    part = partial_sums(groups, n, x.device, 2)
    slots = exchange_slots(m, parts, x.device)
    via(layernorm_exchange_backward_kernel)[(groups * parts,)](
        dy, x, weight, mean, rstd, dx, part[0], part[1], slots, m, n, parts, rows_per_group,
        **exchange_meta(parts, ahead, lean, as_loaded))
    sum_partials(part, grads, via)
    return dx, grads[0], grads[1]


@variant("exchange")
def exchange(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _reread(x, weight, bias, triton_src.launcher, layernorm_tile_ahead_kernel)


@backward("exchange")
def exchange_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _exchange_backward(dy, x, weight, bias, mean, rstd, triton_src.launcher)


# ---- exchange_ahead: v10 with 16-bit rows' loads two rows ahead. --------------------------------------------------
# A v10 program has one row's loads of its part in flight while it reduces, publishes and waits: at 2048 columns,
# 16 KB of x and dy in fp32, 8 KB in fp16/bf16, two programs an SM. A multiprocessor keeps its share of the memory
# busy only with enough bytes in flight to cover a round trip to DRAM, and halving them halves what it can move: the
# lesson of CUDA's v8 (cuda_src/layernorm.cu), whose ring of rows in shared memory sets the bytes in flight instead
# of the registers. v11 issues a 16-bit row's loads two rows before it is used (two rows of x and dy in flight, in
# the registers of one fp32 row: no spill at 8 warps and 128 registers, ptxas -v of Triton 3.8's sm_90 PTX, where
# fp32 two rows ahead spills); fp32 rows keep v10's one row ahead. Everything else is v10's. It bought nothing: in
# bf16 v11 is level with v10 or a little behind it at 16K-32K, their 64K cells moving with the host's time a call
# (results/nvidia-h200/norm-backward-exchange-ahead/, at fbec4e7), so the bytes in flight are not what holds v10
# (v12 says what does).
def exchange_rows_ahead(x: torch.Tensor) -> int:
    """Rows ahead that v11 loads x's rows: two in fp16/bf16, one in fp32 (v10's)."""
    return 2 if x.element_size() == 2 else 1


@variant("exchange_ahead")
def exchange_ahead(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _reread(x, weight, bias, triton_src.launcher, layernorm_tile_ahead_kernel)


@backward("exchange_ahead")
def exchange_ahead_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _exchange_backward(dy, x, weight, bias, mean, rstd, triton_src.launcher, ahead=exchange_rows_ahead(x))


# ---- lean_exchange: v10 with fewer reductions across the program a row, its statistics a row ahead. ------------
# v10 and v11 take about as long a row in bf16 as in fp32, for half the bytes, and v11's second row of loads in
# flight bought nothing (results/nvidia-h200/norm-backward-exchange-ahead/, at fbec4e7): the row's bytes are not what
# holds them. Under ncu (the README there) v10's kernel issues as many instructions in bf16 as in fp32, a few hundred
# a thread a row for its 8 columns of each vector, with the multiprocessors about half busy and DRAM a third busy in
# bf16: each row's fixed work, and what its warps wait on, spread over few columns. A row costs a program six
# reductions across its warps (its part's two sums; for each of the two sums of the parts, a check of the 64-bit
# flags, then the sum), each a round of shuffles and one through shared memory between barriers, and two loads of
# its statistics (mean, rstd) issued as the row starts and used at once. v12 takes the part's two sums in one
# reduction of the pair, and the check and the sums of the parts in one reduction of (flag, sum, sum), its flags
# 32-bit words (tl.reduce of several operands), and loads each row's statistics a row ahead, with its x: fewer
# instructions and barriers a row in Triton 3.8's sm_90 code (counted in that README). The reductions of several
# operands hold more registers: with two rows' x̂ and w·dy kept the kernel spills, so v12 writes a row's dx one row
# late (v10's first design; at the time two rows late changed little, timed outside the lab's tables): one row's
# values kept, no spill in the loop. v11's rows ahead are left out: they bought nothing and spill beside these
# reductions. Everything else is v10's.
@variant("lean_exchange")
def lean_exchange(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _reread(x, weight, bias, triton_src.launcher, layernorm_tile_ahead_kernel)


@backward("lean_exchange")
def lean_exchange_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _exchange_backward(dy, x, weight, bias, mean, rstd, triton_src.launcher, lean=True)


# ---- lean_ahead: v12 with 16-bit rows' loads two rows ahead, the late row kept as it was loaded. ------------------
# v12 cut each row's fixed work, and its 16-bit rows gained the most (results/<gpu>/layernorm-backward.md; first
# run: results/nvidia-h100-80gb-hbm3/norm-backward-lean-exchange/, at 31aeee7), yet a bf16 row still takes about
# seven tenths of an fp32 row's time for half the bytes. With the fixed work smaller, the bytes a program has in
# flight may be what holds its 16-bit rows now: one row of its part of x and dy, 8 KB at 2048 columns, where v11's
# second row bought nothing only while v10's fixed work held the row. Two rows ahead beside v12's reductions spill in
# LayerNorm (bench/exchange_sass.py), so v13 keeps the late row as it was loaded, its 16-bit x and dy (half the
# registers of v12's fp32 x̂ and w·dy), and computes x̂ and w·dy again for its dx. fp32 rows keep v12's code: there
# the loaded row takes as many registers as x̂ and w·dy, and v11 found nothing to gain from a second row. It bought
# nothing: its 16-bit rows are a little behind v12's, fp32 level (same code), and LayerNorm's loop with the late row
# kept still spills a few words a turn (results/nvidia-h100-80gb-hbm3/norm-backward-lean-ahead/, at f586a89; the
# README there also tells of its first GPU run, whose late row the compiler dropped). The bytes in flight are not
# what holds the exchange's rows; v14's comment says what its turns' times point to.
def lean_ahead_meta(x: torch.Tensor) -> dict:
    """v13's choices for x's rows (either norm's): 16-bit rows two rows ahead and kept as loaded; fp32 v12's."""
    two_ahead = exchange_rows_ahead(x) == 2
    return dict(ahead=2 if two_ahead else 1, lean=True, as_loaded=two_ahead)


@variant("lean_ahead")
def lean_ahead(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _reread(x, weight, bias, triton_src.launcher, layernorm_tile_ahead_kernel)


@backward("lean_ahead")
def lean_ahead_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _exchange_backward(dy, x, weight, bias, mean, rstd, triton_src.launcher, **lean_ahead_meta(x))


# ---- exchange_forward: the forward's long rows split over programs that pass their sums to each other. -----------
# The forward's rows past 16K wait on one program each: v2 holds rows of up to 32K whole in its registers, with
# nothing in flight while it reduces, and v9 reads longer ones twice, the second time from L2. v14 takes them as v10
# takes the backward's, read once: a row split over `parts` programs of EXCHANGE_COLS columns, a group of them taking
# a contiguous run of rows, each its columns of every row, its partners' sums read from the row's slots. A part
# publishes two sums of its columns: Σx and the squares about its own mean, not Σx² (Σx² less (Σx)²/N cancels in
# rows far from zero); the row's squares about its mean are the parts' squares plus each part's count times its
# mean's distance from the row's, squared (v9's merge of its lanes). A row's y is written one row late from its x
# kept as loaded, so a program's partners have published the sums it reads a row before it reads them (v12's lag,
# v13's kept row), and every row's loads are issued two rows ahead: without the backward's dy and gradient sums a
# program has the registers for two rows of x in flight in fp32 too. Everything else (groups, slots, cooperative
# launch, columns, warps and programs an SM) is v10's; the backward is v13's.
# It is behind v9 in every cell it takes, most in 16-bit rows (results/nvidia-h100-80gb-hbm3/norm-forward-exchange/,
# at 6e17942): a loop turn, one row, takes about as long as a backward turn of v12 for a loop of about as many
# instructions (bench/exchange_sass.py) and far fewer bytes. What sets a turn's time is its chain of reductions
# across the program and the partners' sums read through L2, with two programs an SM to overlap them, not the row's
# bytes; fewer, longer turns (more columns a program, one program an SM) did not pay in the backward either
# (results/nvidia-h100-80gb-hbm3/norm-exchange-configs/). Kept as a row for that lesson: splitting a row over
# programs that wait on each other through L2 costs a turn's latency a row, which the forward's light rows do not
# repay (the backward's, with a second read to save against v4, do in fp32: v10's comment).
FORWARD_EXCHANGE_AFTER_COLS = 16384
FORWARD_EXCHANGE_AHEAD = 2
# Rows between a row's sums and its y: 1 as shipped; 2 (bench/exchange_configs.py's `lag`) reads sums its partners
# published a whole turn earlier, a test of whether a turn waits on them.
FORWARD_EXCHANGE_LAG = 1


@triton.jit
def row_ahead(x_ptr, n, cols, mask, row, last, x_1, x_2, AHEAD: tl.constexpr):
    """A row's x as loaded, from the loads in flight, and the loads then in flight: row + 1 (x_1) and, with
    AHEAD = 2, row + 2 (x_2), each issued AHEAD rows before its row; rows past the group's last are masked off."""
    x = x_1
    if AHEAD == 2:
        x_1 = x_2
        x_2 = tl.load(x_ptr + (row + 2) * n + cols, mask=mask & (row + 2 < last), other=0.0)
    else:
        x_1 = tl.load(x_ptr + (row + 1) * n + cols, mask=mask & (row + 1 < last), other=0.0)
    return x, x_1, x_2


@triton.jit
def first_x_rows(x_ptr, n, cols, mask, first, last):
    """The loads of a group's first two rows of x (the second's used only two rows ahead), masked off past its
    last."""
    x_1 = tl.load(x_ptr + first * n + cols, mask=mask & (first < last), other=0.0)
    x_2 = tl.load(x_ptr + (first + 1) * n + cols, mask=mask & (first + 1 < last), other=0.0)
    return x_1, x_2


@triton.jit
def late_row(x, x_late_1, x_late_2, LAG: tl.constexpr):
    """(the row LAG (1 or 2) rows back as loaded, whose y is written now; the rows then one and two back), from this
    row's loads and the rows kept one and two back."""
    if LAG == 1:
        return x_late_1, x, x_late_2
    else:
        return x_late_2, x, x_late_1


@triton.jit
def part_moments(x, mask, count):
    """(Σx, Σ(x - the part's mean)²) over a program's part of a row, `count` columns (x zero off the mask)."""
    s = tl.sum(x, axis=0)
    centered = tl.where(mask, x - s / count, 0.0)
    return s, tl.sum(centered * centered, axis=0)


@triton.jit
def row_moments(got_a, got_b, words, present, n, BLOCK: tl.constexpr, SLOTS: tl.constexpr):
    """A row's mean and Σ(x - mean)² from its parts' (Σx, squares about the part's mean) as read_slots read them,
    read again until every part has published (gathered)."""
    s, squares, got_a = gathered(got_a, got_b, words, present, True)
    mean = s / n
    count = tl.minimum(tl.maximum(n - tl.arange(0, SLOTS // 2) * BLOCK, 0), BLOCK).to(tl.float32)  # 0: no part
    apart = tl.where(count > 0, word_sums(got_a) / tl.maximum(count, 1.0) - mean, 0.0)
    return mean, squares + tl.sum(count * apart * apart, axis=0)


@triton.jit
def layernorm_exchange_forward_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, slots_ptr, m, n, eps, parts,
                                      rows_per_group, BLOCK: tl.constexpr, SLOTS: tl.constexpr,
                                      AHEAD: tl.constexpr, LAG: tl.constexpr):
    _, part, w, cols, mask, first, last = exchange_part(w_ptr, m, n, parts, rows_per_group, BLOCK)
    b = load_tile(b_ptr, 0, n, part * BLOCK, BLOCK)[0]
    count = tl.minimum(n - part * BLOCK, BLOCK).to(tl.float32)  # this part's columns
    x_1, x_2 = first_x_rows(x_ptr, n, cols, mask, first, last)
    # the rows one and two before, as loaded (not x_1 itself: v13's kernel says why); with LAG 1 the second unused
    x_late_1, x_late_2 = tl.zeros_like(x_1), tl.zeros_like(x_1)
    for row in range(first, last + LAG):  # the last turns write the last rows' y only
        late = row - LAG
        got_a, got_b, words, present = read_slots(slots_ptr, late, parts, late >= first, SLOTS, True)  # in flight
        x, x_1, x_2 = row_ahead(x_ptr, n, cols, mask, row, last, x_1, x_2, AHEAD)
        x_late, x_late_1, x_late_2 = late_row(x, x_late_1, x_late_2, LAG)
        if row < last:
            s, squares = part_moments(x.to(tl.float32), mask, count)
            publish_sums(slots_ptr, row, part, parts, s, squares, True)
        if late >= first:
            mean, squares = row_moments(got_a, got_b, words, present, n, BLOCK, SLOTS)
            rstd = 1.0 / tl.sqrt(squares / n + eps)
            y = (x_late.to(tl.float32) - mean) * rstd * w + b
            tl.store(y_ptr + late * n + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
            if part == 0:
                tl.store(mean_ptr + late, mean)
                tl.store(rstd_ptr + late, rstd)


def exchange_forward_meta(parts: int, part_cols: int | None = None) -> dict:
    """The launch parameters of v14's forward kernel (either norm's; softmax's v7 to v9 too) for rows of `parts`
    parts of `part_cols` columns (default EXCHANGE_COLS)."""
    return dict(BLOCK=EXCHANGE_COLS if part_cols is None else part_cols, SLOTS=exchange_slot_words(parts),
                AHEAD=FORWARD_EXCHANGE_AHEAD, LAG=FORWARD_EXCHANGE_LAG, **EXCHANGE_LAUNCH)


def _exchange_forward(x, weight, bias, via=as_written):
    programs = exchange_programs(x, FORWARD_EXCHANGE_AFTER_COLS)
    if programs is None:
        return _reread(x, weight, bias, via, layernorm_tile_ahead_kernel)
    parts, groups, rows_per_group = programs
    m, n = x.shape
    y = torch.empty_like(x)
    mean, rstd = row_statistics(m, x.device, 2)
    via(layernorm_exchange_forward_kernel)[(groups * parts,)](
        x, weight, bias, y, mean, rstd, exchange_slots(m, parts, x.device), m, n, EPS, parts, rows_per_group,
        **exchange_forward_meta(parts))
    return y, mean, rstd


@variant("exchange_forward")
def exchange_forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    return _exchange_forward(x, weight, bias, triton_src.launcher)


@backward("exchange_forward")
def exchange_forward_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    return _exchange_backward(dy, x, weight, bias, mean, rstd, triton_src.launcher, **lean_ahead_meta(x))
