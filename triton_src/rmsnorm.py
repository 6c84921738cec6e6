"""RMSNorm of an (M, N) tensor in Triton, forward and backward. Spec: specs/rmsnorm.py. CUDA side:
cuda_src/rmsnorm.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/rmsnorm.md, -backward.md, -fwd-bwd.md):
  v1 basic    one row per program, the row in tiles of up to 4096 elements read twice (Σx², output); backward:
              dx per row, dweight as a row of partial sums per program, summed by a second kernel
  v2 fused    + rows of up to 64K elements forward, 32K backward: the row held whole in registers and read once,
              several short rows per program; backward: each program takes a contiguous run of rows and keeps
              its dweight sums in registers, writing its partial row once
  v3 prefetch + backward rows of up to 8K: the next row's loads issued before this row is reduced, so loads stay
              in flight while a program reduces (the forward is v2's)
  v4 split    + backward rows past 16K: a row cut into chunks shared by programs, its sum gathered by a first
              kernel and its dx written by a second (the row read twice; the forward is v2's)
  v5 direct   + every launch without Triton's per-call Python: v4's forward and backward through
              triton_src.launcher (layernorm.py's v6), the host's time per call cut, the GPU's work the same
  v6 reread   + forward rows past 32K: v1's tiles again, held by many small programs instead of one large one,
              the row's second read served by L2 (layernorm.py's v7)
  v7 newest_first  + the second pass from the row's end (layernorm.py's v8)
  v8 tile_ahead  + each pass loads its next tile before it uses this one, two tiles in flight a thread
              (layernorm.py's v9, whose per-lane statistics v6 already has: Σx² a lane)
  v9 exchange + backward rows past 8K (16-bit rows past 16K): a row split over programs that are all resident at
              once, each passing its part of the row's sum to the others through L2 and waiting for theirs, so the
              row is read once (layernorm.py's v10; the forward is v8's)
  v10 exchange_ahead  + v9 with fp16/bf16 rows' loads issued two rows ahead instead of one (layernorm.py's v11)
  v11 lean_exchange  + v9 with the check that every part is published and the sum of the parts in one reduction
              across the program, each row's rstd loaded a row ahead and its dx written one row late
              (layernorm.py's v12; v10's rows ahead left out)
  v12 lean_ahead  + v11 with fp16/bf16 rows' loads two rows ahead, the late row kept as loaded (layernorm.py's v13)
  v13 exchange_forward  + forward rows past 16K split over programs as v9 splits the backward's, read once, each
              row's y written one row late, every row's loads two rows ahead (layernorm.py's v14; the backward is
              v12's; slower than v8)

triton_src/layernorm.py without the mean and the bias: one statistic per row, so v1's forward reads the row twice,
not three times, and the backward reduces one gradient across rows, not two. What the two files share is
layernorm.py's, imported from there, not repeated: the tile loader, the cross-row reduction (a (G, N) buffer of
partial sums, one row per program, then a kernel summing columns), the fused steps' tile shapes, program counts and
warp choices (the comments there say why each is what it is).
"""
import torch
import triton
import triton.language as tl

import triton_src

from compare.spec import backward, variant
from compare.validate import InputError, check_inputs
from triton_src import as_written
from triton_src.layernorm import (FORWARD_EXCHANGE_AFTER_COLS, MAX_FUSED_BACKWARD_COLS, MAX_FUSED_COLS,
                                  MAX_PREFETCH_COLS, PREFETCH_VALUES, REREAD_AFTER_COLS, REREAD_CONFIGS,
                                  SPLIT_AFTER_COLS, SPLIT_COLS, SPLIT_WARPS, WARP_CONFIGS, exchange_forward_meta,
                                  exchange_meta, exchange_part, exchange_programs, exchange_rows_ahead, exchange_slots,
                                  first_rows, first_x_rows, fused_backward_programs, fused_tile, gather_sums, gathered,
                                  lagged, late_row, lean_ahead_meta, load_tile, load_tile_ahead, load_tile_hinted,
                                  partial_sums, publish_sums, read_slots, recomputed, reread_tile_start, row_ahead,
                                  row_statistic, rows_ahead, sm_count, split_programs, sum_partials,
                                  warps_worth_trying)

EPS = 1e-6  # the spec's (specs/rmsnorm.py)


# ---- basic: the row in tiles, any length. ------------------------------------------------------------------------
TILE = 4096  # elements of a row a program holds at once: any N works, in tiles


@triton.jit
def rmsnorm_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # int64: M·N may exceed 2^31
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        x = load_tile(x_ptr, row, n, start, BLOCK)[0]
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    for start in range(0, n, BLOCK):
        x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
        w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
        tl.store(y_ptr + row * n + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rmsnorm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_part_ptr, m, n, BLOCK: tl.constexpr):
    # Program g takes rows g, g + G, ... and keeps their dy·x̂ in row g of the partial buffer (layernorm.py says why).
    g = tl.program_id(0).to(tl.int64)
    for row in range(g, m, tl.num_programs(0)):
        rstd = tl.load(rstd_ptr + row)
        # dx = rstd·(w·dy - x̂·mean(w·dy·x̂)), x̂ = x·rstd: one sum over the row first.
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n, BLOCK):
            x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
            dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
            w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
            acc += w * dy * x * rstd
        c = tl.sum(acc, axis=0) / n
        for start in range(0, n, BLOCK):
            x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
            dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
            w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
            xhat = x * rstd
            tl.store(dx_ptr + row * n + cols, ((w * dy - xhat * c) * rstd).to(dx_ptr.dtype.element_ty), mask=mask)
            old = tl.load(dw_part_ptr + g * n + cols, mask=mask & (row != g), other=0.0)  # the first row stores
            tl.store(dw_part_ptr + g * n + cols, old + dy * xhat, mask=mask)


def _check(x, weight, grad=None):
    named = [("x", x), ("weight", weight)] + ([("dy", grad)] if grad is not None else [])
    check_inputs("rmsnorm", *named)
    if x.dim() != 2:
        raise InputError(f"rmsnorm: x has {x.dim()} dimensions (shape {tuple(x.shape)}); expected 2 (M, N)")
    if weight.dim() != 1 or weight.shape[0] != x.shape[1]:
        raise InputError(f"rmsnorm: weight has shape {tuple(weight.shape)}; expected ({x.shape[1]},), one per "
                         f"column of x")
    if grad is not None and grad.shape != x.shape:
        raise InputError(f"rmsnorm: dy has shape {tuple(grad.shape)}, x {tuple(x.shape)}; they must match")


# Each step's launchers take inputs already checked (layernorm.py says why).
def _basic(x, weight, via=as_written):
    m, n = x.shape
    y = torch.empty_like(x)
    rstd = torch.empty(m, device=x.device, dtype=torch.float32)
    if m and n:
        via(rmsnorm_forward_kernel)[(m,)](x, weight, y, rstd, n, EPS, BLOCK=min(TILE, triton_src.next_power_of_2(n)))
    return y, rstd


def _basic_backward(dy, x, weight, rstd, via=as_written):
    m, n = x.shape
    dx, dweight = torch.empty_like(x), torch.empty_like(weight)
    if not (m and n):
        return dx, dweight.zero_()
    programs = min(m, 4 * sm_count(x.device))
    part = partial_sums(programs, n, x.device, 1)
    via(rmsnorm_backward_kernel)[(programs,)](dy, x, weight, rstd, dx, part, m, n,
                                              BLOCK=min(TILE, triton_src.next_power_of_2(n)))
    sum_partials(part, dweight.view(1, n), via)
    return dx, dweight


@variant("basic")
def basic(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _basic(x, weight)


@backward("basic")
def basic_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _basic_backward(dy, x, weight, rstd)


# ---- fused: the row held whole in registers, read once (layernorm.py's v2, one statistic fewer). -----------------
@triton.autotune(configs=WARP_CONFIGS, key=["m", "n"], prune_configs_by={"early_config_prune": warps_worth_trying})
@triton.jit
def rmsnorm_fused_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, m, n, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr,
                         VALUES: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    row_ok = rows < m
    offsets = rows[:, None] * n + cols[None, :]
    mask = row_ok[:, None] & (cols < n)[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)  # rows past M: zeros, never stored
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / n + eps)
    w = tl.load(w_ptr + cols, mask=cols < n, other=0.0).to(tl.float32)
    tl.store(y_ptr + offsets, (x * rstd[:, None] * w[None, :]).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + rows, rstd, mask=row_ok)


def _fused(x, weight, via=as_written):
    m, n = x.shape
    if n > MAX_FUSED_COLS or not (m and n):
        return _basic(x, weight, via)
    y = torch.empty_like(x)
    rstd = torch.empty(m, device=x.device, dtype=torch.float32)
    rows, block = fused_tile(x)
    via(rmsnorm_fused_kernel)[(triton_src.cdiv(m, rows),)](x, weight, y, rstd, m, n, EPS, ROWS=rows, BLOCK=block,
                                                           VALUES=64)
    return y, rstd


@triton.autotune(configs=WARP_CONFIGS, key=["m", "n"], prune_configs_by={"early_config_prune": warps_worth_trying})
@triton.jit
def rmsnorm_fused_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_part_ptr, m, n, rows_per_program,
                                  BLOCK: tl.constexpr, VALUES: tl.constexpr, PREFETCH: tl.constexpr):
    g = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    first = g * rows_per_program
    last = tl.minimum(first + rows_per_program, m)
    if PREFETCH:  # v3: the first row's loads before the loop, each next row's before this row's reduction
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
        rstd = tl.load(rstd_ptr + row)
        xhat = x * rstd
        wdy = w * dy
        c = tl.sum(wdy * xhat, axis=0) / n
        tl.store(dx_ptr + row * n + cols, ((wdy - xhat * c) * rstd).to(dx_ptr.dtype.element_ty), mask=mask)
        dw += dy * xhat
    tl.store(dw_part_ptr + g * n + cols, dw, mask=mask)  # a program with no rows writes zeros


def _launch_fused_backward(dy, x, weight, rstd, prefetch: bool, via=as_written):
    m, n = x.shape
    dx, dweight = torch.empty_like(x), torch.empty_like(weight)
    programs, rows_per_program = fused_backward_programs(m, x.device)
    part = partial_sums(programs, n, x.device, 1)
    via(rmsnorm_fused_backward_kernel)[(programs,)](dy, x, weight, rstd, dx, part, m, n, rows_per_program,
                                                    BLOCK=triton_src.next_power_of_2(n),
                                                    VALUES=PREFETCH_VALUES if prefetch else 32, PREFETCH=prefetch)
    sum_partials(part, dweight.view(1, n), via)
    return dx, dweight


def _fused_backward(dy, x, weight, rstd, via=as_written):
    m, n = x.shape
    if n > MAX_FUSED_BACKWARD_COLS or not (m and n):
        return _basic_backward(dy, x, weight, rstd, via)
    return _launch_fused_backward(dy, x, weight, rstd, False, via)


@variant("fused")
def fused(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _fused(x, weight)


@backward("fused")
def fused_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _fused_backward(dy, x, weight, rstd)


# ---- prefetch: the backward loads its next row before it reduces this one (layernorm.py's v3 says why). ---------
def _prefetch_backward(dy, x, weight, rstd, via=as_written):
    m, n = x.shape
    if n > MAX_PREFETCH_COLS or not (m and n):
        return _fused_backward(dy, x, weight, rstd, via)
    return _launch_fused_backward(dy, x, weight, rstd, True, via)


@variant("prefetch")
def prefetch(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _fused(x, weight)


@backward("prefetch")
def prefetch_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _prefetch_backward(dy, x, weight, rstd)


# ---- split: a long row's backward shared by several programs (layernorm.py's v4, with one sum per row). ----------
@triton.jit
def rmsnorm_split_sums_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, sums_ptr, n, chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    x, cols, mask = load_tile(x_ptr, row, n, chunk * BLOCK, BLOCK)
    dy = load_tile(dy_ptr, row, n, chunk * BLOCK, BLOCK)[0]
    w = load_tile(w_ptr, 0, n, chunk * BLOCK, BLOCK)[0]
    tl.store(sums_ptr + row * chunks + chunk, tl.sum(w * dy * x * tl.load(rstd_ptr + row), axis=0))


@triton.jit
def rmsnorm_split_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, sums_ptr, dx_ptr, dw_part_ptr, m, n, chunks,
                                  rows_per_program, BLOCK: tl.constexpr, CHUNKS: tl.constexpr):
    chunk = tl.program_id(0)
    g = tl.program_id(1).to(tl.int64)
    start = chunk * BLOCK
    w, cols, mask = load_tile(w_ptr, 0, n, start, BLOCK)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    which = tl.arange(0, CHUNKS)
    first = g * rows_per_program
    last = tl.minimum(first + rows_per_program, m)
    for row in range(first, last):
        c = tl.sum(tl.load(sums_ptr + row * chunks + which, mask=which < chunks, other=0.0), axis=0) / n
        x = load_tile(x_ptr, row, n, start, BLOCK)[0]
        dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
        rstd = tl.load(rstd_ptr + row)
        xhat = x * rstd
        tl.store(dx_ptr + row * n + cols, ((w * dy - xhat * c) * rstd).to(dx_ptr.dtype.element_ty), mask=mask)
        dw += dy * xhat
    tl.store(dw_part_ptr + g * n + cols, dw, mask=mask)  # a group with no rows writes zeros


def _split_backward(dy, x, weight, rstd, via=as_written):
    m, n = x.shape
    if n <= SPLIT_AFTER_COLS or not (m and n):
        return _prefetch_backward(dy, x, weight, rstd, via)
    chunks = triton_src.cdiv(n, SPLIT_COLS)
    sums = torch.empty((m, chunks), device=x.device, dtype=torch.float32)
    via(rmsnorm_split_sums_kernel)[(m, chunks)](dy, x, weight, rstd, sums, n, chunks, BLOCK=SPLIT_COLS,
                                                num_warps=SPLIT_WARPS)
    groups, rows_per_program = split_programs(m, chunks, x.device)
    dx, dweight = torch.empty_like(x), torch.empty_like(weight)
    part = partial_sums(groups, n, x.device, 1)
    via(rmsnorm_split_backward_kernel)[(chunks, groups)](dy, x, weight, rstd, sums, dx, part, m, n, chunks,
                                                         rows_per_program, BLOCK=SPLIT_COLS,
                                                         CHUNKS=triton_src.next_power_of_2(chunks),
                                                         num_warps=SPLIT_WARPS)
    sum_partials(part, dweight.view(1, n), via)
    return dx, dweight


@variant("split")
def split(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _fused(x, weight)


@backward("split")
def split_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _split_backward(dy, x, weight, rstd)


# ---- direct: v4's launches without Triton's per-call Python (layernorm.py's v6 says why). -------------------------
@variant("direct")
def direct(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _fused(x, weight, triton_src.launcher)


@backward("direct")
def direct_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _split_backward(dy, x, weight, rstd, triton_src.launcher)


# ---- reread: long rows in tiles again, the second read from L2 (layernorm.py's v7 says why). ---------------------
# One statistic, Σx², so the first pass only adds squares: no per-tile merge.
@triton.autotune(configs=REREAD_CONFIGS, key=["m", "n"])
@triton.jit
def rmsnorm_reread_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, m, n, eps, BLOCK: tl.constexpr, NEWEST_FIRST: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    tiles = tl.cdiv(n, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for t in range(0, tiles):
        x = load_tile_hinted(x_ptr, row, n, t * BLOCK, BLOCK, "evict_last")[0]
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    for t in range(0, tiles):
        start = reread_tile_start(t, tiles, BLOCK, NEWEST_FIRST)
        x, cols, mask = load_tile_hinted(x_ptr, row, n, start, BLOCK, "evict_first")
        w = load_tile_hinted(w_ptr, 0, n, start, BLOCK, "evict_last")[0]
        tl.store(y_ptr + row * n + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + row, rstd)


def _reread(x, weight, via=as_written, kernel=rmsnorm_reread_kernel, **meta):
    """Rows past REREAD_AFTER_COLS through `kernel` (v6's or a later step's), one program a row; others to v2."""
    m, n = x.shape
    if n <= REREAD_AFTER_COLS or not m:
        return _fused(x, weight, via)
    y = torch.empty_like(x)
    rstd = torch.empty(m, device=x.device, dtype=torch.float32)
    via(kernel)[(m,)](x, weight, y, rstd, m, n, EPS, **meta)
    return y, rstd


@variant("reread")
def reread(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _reread(x, weight, triton_src.launcher, NEWEST_FIRST=False)


@backward("reread")
def reread_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _split_backward(dy, x, weight, rstd, triton_src.launcher)


# ---- newest_first: v6, its second pass from the row's end (layernorm.py's v8). ---------------------------------
@variant("newest_first")
def newest_first(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _reread(x, weight, triton_src.launcher, NEWEST_FIRST=True)


@backward("newest_first")
def newest_first_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _split_backward(dy, x, weight, rstd, triton_src.launcher)


# ---- tile_ahead: the next tile's loads issued before this tile's are used (layernorm.py's v9 says why). -----------
@triton.autotune(configs=REREAD_CONFIGS, key=["m", "n"])
@triton.jit
def rmsnorm_tile_ahead_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, m, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    tiles = tl.cdiv(n, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    x_ahead = load_tile_ahead(x_ptr, row, n, 0, BLOCK, "evict_last")[0]
    for t in range(0, tiles):
        x = x_ahead
        x_ahead = load_tile_ahead(x_ptr, row, n, (t + 1) * BLOCK, BLOCK, "evict_last")[0]
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    start = reread_tile_start(0, tiles, BLOCK, True)
    x_ahead, cols_ahead, mask_ahead = load_tile_ahead(x_ptr, row, n, start, BLOCK, "evict_first")
    w_ahead = load_tile_ahead(w_ptr, 0, n, start, BLOCK, "evict_last")[0]
    for t in range(0, tiles):
        x, cols, mask, w = x_ahead, cols_ahead, mask_ahead, w_ahead
        start = reread_tile_start(t + 1, tiles, BLOCK, True)  # -BLOCK after the last: masked off
        x_ahead, cols_ahead, mask_ahead = load_tile_ahead(x_ptr, row, n, start, BLOCK, "evict_first")
        w_ahead = load_tile_ahead(w_ptr, 0, n, start, BLOCK, "evict_last")[0]
        tl.store(y_ptr + row * n + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + row, rstd)


@variant("tile_ahead")
def tile_ahead(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _reread(x, weight, triton_src.launcher, rmsnorm_tile_ahead_kernel)


@backward("tile_ahead")
def tile_ahead_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _split_backward(dy, x, weight, rstd, triton_src.launcher)


# ---- exchange: a long row's backward shared by programs that pass their sums to each other (layernorm.py's v10). --
@triton.jit
def rmsnorm_exchange_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_part_ptr, slots_ptr, m, n, parts,
                                     rows_per_group, BLOCK: tl.constexpr, SLOTS: tl.constexpr, AHEAD: tl.constexpr,
                                     LEAN: tl.constexpr, LAG: tl.constexpr, AS_LOADED: tl.constexpr):
    g, part, w, cols, mask, first, last = exchange_part(w_ptr, m, n, parts, rows_per_group, BLOCK)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    x_1, dy_1, x_2, dy_2 = first_rows(x_ptr, dy_ptr, n, cols, mask, first, last)
    rstd_next = tl.load(rstd_ptr + first, mask=first < last, other=0.0)  # the first row's rstd (LEAN's)
    # x̂, w·dy and rstd of the rows one and two before, kept for their dx (with LAG 1 the second pair goes unused)
    xhat_1, wdy_1, rstd_1 = tl.zeros([BLOCK], dtype=tl.float32), tl.zeros([BLOCK], dtype=tl.float32), 0.0
    xhat_2, wdy_2, rstd_2 = tl.zeros([BLOCK], dtype=tl.float32), tl.zeros([BLOCK], dtype=tl.float32), 0.0
    # (AS_LOADED, LAG 1) the row before as loaded: zeros to start with (layernorm.py's v13 kernel says why)
    x_in_1, dy_in_1 = tl.zeros_like(x_1), tl.zeros_like(dy_1)
    for row in range(first, last + LAG):  # the last turns write the last rows' dx only
        late = row - LAG
        got_a, got_b, words, present = read_slots(slots_ptr, late, parts, late >= first, SLOTS, False)  # in flight
        x_in, dy_in = x_1, dy_1  # this row's loads, as they came
        x, dy, x_1, dy_1, x_2, dy_2 = rows_ahead(x_ptr, dy_ptr, n, cols, mask, row, last, x_1, dy_1, x_2, dy_2,
                                                 AHEAD)
        rstd, rstd_next = row_statistic(rstd_ptr, row, last, rstd_next, LEAN)
        xhat = x * rstd
        wdy = w * dy
        dw += dy * xhat  # zeros on the last turns
        if row < last:  # one sum a row: the first word of its slot
            s_wdy_xhat = tl.sum(wdy * xhat, axis=0)
            publish_sums(slots_ptr, row, part, parts, s_wdy_xhat, s_wdy_xhat, False)
        if late >= first:
            s_wdy_xhat = gather_sums(got_a, got_b, words, present, False, LEAN)[0]
            if AS_LOADED:
                xhat_l, wdy_l = recomputed(x_in_1, dy_in_1, w, mask, 0.0, rstd_1)
                rstd_l = rstd_1
            else:
                xhat_l, wdy_l, rstd_l = lagged(xhat_1, wdy_1, rstd_1, xhat_2, wdy_2, rstd_2, LAG)
            tl.store(dx_ptr + late * n + cols,
                     ((wdy_l - xhat_l * (s_wdy_xhat / n)) * rstd_l).to(dx_ptr.dtype.element_ty), mask=mask)
        xhat_2, wdy_2, rstd_2 = xhat_1, wdy_1, rstd_1
        xhat_1, wdy_1, rstd_1 = xhat, wdy, rstd
        x_in_1, dy_in_1 = x_in, dy_in
    tl.store(dw_part_ptr + g * n + cols, dw, mask=mask)  # a group with no rows writes zeros


# The exchange steps take RMSNorm's 16-bit rows only past 16K: at 16K v2's kernel (the row in one program's registers,
# which RMSNorm's one sum and four vectors a column fit where LayerNorm's spill) was ahead of every exchange step in
# fp16 and bf16 on both GPUs, the exchange's work a row weighing more against a 16-bit row's bytes, while in fp32 the
# exchange steps were ahead or level (results/<gpu>/rmsnorm-backward.md: the H100's at 4f016c7, the H200's at
# fbec4e7). LayerNorm's rows of 16K spill in v2 and stay with the exchange.
HALF_EXCHANGE_AFTER_COLS = 16384


def backward_exchange_programs(x: torch.Tensor) -> tuple[int, int, int] | None:
    """exchange_programs for the backward's rows, with 16-bit rows of up to HALF_EXCHANGE_AFTER_COLS left to v2."""
    return exchange_programs(x, HALF_EXCHANGE_AFTER_COLS if x.element_size() == 2 else None)


def _exchange_backward(dy, x, weight, rstd, via=as_written, ahead=1, lean=False, as_loaded=False):
    programs = backward_exchange_programs(x)
    if programs is None:
        return _split_backward(dy, x, weight, rstd, via)
    parts, groups, rows_per_group = programs
    m, n = x.shape
    dx, dweight = torch.empty_like(x), torch.empty_like(weight)
    part = partial_sums(groups, n, x.device, 1)
    slots = exchange_slots(m, parts, x.device)
    via(rmsnorm_exchange_backward_kernel)[(groups * parts,)](
        dy, x, weight, rstd, dx, part, slots, m, n, parts, rows_per_group,
        **exchange_meta(parts, ahead, lean, as_loaded))
    sum_partials(part, dweight.view(1, n), via)
    return dx, dweight


@variant("exchange")
def exchange(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _reread(x, weight, triton_src.launcher, rmsnorm_tile_ahead_kernel)


@backward("exchange")
def exchange_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _exchange_backward(dy, x, weight, rstd, triton_src.launcher)


# ---- exchange_ahead: v9 with 16-bit rows' loads two rows ahead (layernorm.py's v11). -----------------------------
@variant("exchange_ahead")
def exchange_ahead(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _reread(x, weight, triton_src.launcher, rmsnorm_tile_ahead_kernel)


@backward("exchange_ahead")
def exchange_ahead_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _exchange_backward(dy, x, weight, rstd, triton_src.launcher, ahead=exchange_rows_ahead(x))


# ---- lean_exchange: v9 with its check and sum of the parts in one reduction, rstd a row ahead, dx one row late
# (layernorm.py's v12, whose comment says why). RMSNorm's row has one sum, so its part's sum was one reduction
# already.
@variant("lean_exchange")
def lean_exchange(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _reread(x, weight, triton_src.launcher, rmsnorm_tile_ahead_kernel)


@backward("lean_exchange")
def lean_exchange_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _exchange_backward(dy, x, weight, rstd, triton_src.launcher, lean=True)


# ---- lean_ahead: v11 with 16-bit rows' loads two rows ahead, the late row kept as loaded (layernorm.py's v13). ----
@variant("lean_ahead")
def lean_ahead(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _reread(x, weight, triton_src.launcher, rmsnorm_tile_ahead_kernel)


@backward("lean_ahead")
def lean_ahead_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _exchange_backward(dy, x, weight, rstd, triton_src.launcher, **lean_ahead_meta(x))


# ---- exchange_forward: the forward's long rows split over programs that pass their sums to each other -------------
# (layernorm.py's v14, whose comment says why, and why it is slower than v8). One sum a row, Σx², which needs no
# centring: what the parts publish adds up to the row's.
@triton.jit
def rmsnorm_exchange_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, slots_ptr, m, n, eps, parts, rows_per_group,
                                    BLOCK: tl.constexpr, SLOTS: tl.constexpr, AHEAD: tl.constexpr,
                                    LAG: tl.constexpr):
    _, part, w, cols, mask, first, last = exchange_part(w_ptr, m, n, parts, rows_per_group, BLOCK)
    x_1, x_2 = first_x_rows(x_ptr, n, cols, mask, first, last)
    # the rows one and two before, as loaded (layernorm.py's v13 kernel: not x_1); with LAG 1 the second unused
    x_late_1, x_late_2 = tl.zeros_like(x_1), tl.zeros_like(x_1)
    for row in range(first, last + LAG):  # the last turns write the last rows' y only
        late = row - LAG
        got_a, got_b, words, present = read_slots(slots_ptr, late, parts, late >= first, SLOTS, False)  # in flight
        x, x_1, x_2 = row_ahead(x_ptr, n, cols, mask, row, last, x_1, x_2, AHEAD)
        x_late, x_late_1, x_late_2 = late_row(x, x_late_1, x_late_2, LAG)
        if row < last:  # one sum a row: the first word of its slot
            squares = tl.sum(x.to(tl.float32) * x.to(tl.float32), axis=0)
            publish_sums(slots_ptr, row, part, parts, squares, squares, False)
        if late >= first:
            rstd = 1.0 / tl.sqrt(gathered(got_a, got_b, words, present, False)[0] / n + eps)
            tl.store(y_ptr + late * n + cols, (x_late.to(tl.float32) * rstd * w).to(y_ptr.dtype.element_ty),
                     mask=mask)
            if part == 0:
                tl.store(rstd_ptr + late, rstd)


def _exchange_forward(x, weight, via=as_written):
    programs = exchange_programs(x, FORWARD_EXCHANGE_AFTER_COLS)
    if programs is None:
        return _reread(x, weight, via, rmsnorm_tile_ahead_kernel)
    parts, groups, rows_per_group = programs
    m, n = x.shape
    y, rstd = torch.empty_like(x), torch.empty(m, device=x.device, dtype=torch.float32)
    via(rmsnorm_exchange_forward_kernel)[(groups * parts,)](
        x, weight, y, rstd, exchange_slots(m, parts, x.device), m, n, EPS, parts, rows_per_group,
        **exchange_forward_meta(parts))
    return y, rstd


@variant("exchange_forward")
def exchange_forward(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    return _exchange_forward(x, weight, triton_src.launcher)


@backward("exchange_forward")
def exchange_forward_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    return _exchange_backward(dy, x, weight, rstd, triton_src.launcher, **lean_ahead_meta(x))
