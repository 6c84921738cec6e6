"""Planted LayerNorm rows (Triton): a right forward, one right backward and backwards wrong in the ways a cross-row
reduction goes wrong. tests/test_norms.py runs each through the layernorm-backward schedule and expects every wrong
one caught.

  right          one row per program: dx, and the row's dy·x̂ and dy as a row of partial sums; a second kernel
                 sums the partials of every row into dweight and dbias
  drops_block    the second kernel sums all but the last 4 rows' partials: a weight gradient missing a block of rows
  racy           every program adds its row into dweight and dbias with a plain load and store, no atomics: updates
                 from programs running at once are lost (on a GPU; the interpreter runs programs one at a time)
  no_eps         the backward recomputes rstd from x without eps instead of using the one its forward saved
  stale          the partial-sum rows live in a buffer kept from the call before and are added to, never rewritten
"""
import torch
import triton
import triton.language as tl

from compare.spec import backward, variant
from compare.validate import check_inputs

EPS = 1e-5


@triton.jit
def _forward_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * n + cols, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def _backward_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, pw_ptr, pb_ptr, n, eps,
                     RECOMPUTE_WITHOUT_EPS: tl.constexpr, ADD_IN_PLACE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    if RECOMPUTE_WITHOUT_EPS:
        xc0 = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(xc0 * xc0, axis=0) / n)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = w * dy
    c1 = tl.sum(xhat * wdy, axis=0) / n
    c2 = tl.sum(wdy, axis=0) / n
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + row * n + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    if ADD_IN_PLACE:  # one shared row of sums, read-modify-written by every program
        tl.store(pw_ptr + cols, tl.load(pw_ptr + cols, mask=mask) + dy * xhat, mask=mask)
        tl.store(pb_ptr + cols, tl.load(pb_ptr + cols, mask=mask) + dy, mask=mask)
    else:  # this row's own row of partial sums (added to what is there: the stale variant never clears it)
        tl.store(pw_ptr + row * n + cols, tl.load(pw_ptr + row * n + cols, mask=mask) + dy * xhat, mask=mask)
        tl.store(pb_ptr + row * n + cols, tl.load(pb_ptr + row * n + cols, mask=mask) + dy, mask=mask)


@triton.jit
def _sum_rows_kernel(p_ptr, out_ptr, rows, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for r in range(0, rows):
        acc += tl.load(p_ptr + r * n + cols, mask=mask, other=0.0)
    tl.store(out_ptr + cols, acc.to(out_ptr.dtype.element_ty), mask=mask)


def _forward(x, w, b):
    check_inputs("layernorm", ("x", x), ("weight", w), ("bias", b))
    m, n = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(m, device=x.device, dtype=torch.float32)
    rstd = torch.empty(m, device=x.device, dtype=torch.float32)
    _forward_kernel[(m,)](x, w, b, y, mean, rstd, n, EPS, BLOCK=triton.next_power_of_2(n))
    return y, mean, rstd


_KEPT = {}


def _backward(dy, x, w, b, mean, rstd, dropped_rows=0, no_eps=False, racy=False, stale=False):
    check_inputs("layernorm", ("dy", dy), ("x", x), ("weight", w), ("bias", b))
    m, n = x.shape
    dx = torch.empty_like(x)
    rows = 1 if racy else m
    key = (rows, n, x.device)
    if stale and key in _KEPT:
        pw, pb = _KEPT[key]
    else:
        pw = torch.zeros(rows, n, device=x.device, dtype=torch.float32)
        pb = torch.zeros(rows, n, device=x.device, dtype=torch.float32)
        _KEPT[key] = (pw, pb)
    _backward_kernel[(m,)](dy, x, w, mean, rstd, dx, pw, pb, n, EPS, RECOMPUTE_WITHOUT_EPS=no_eps,
                           ADD_IN_PLACE=racy, BLOCK=triton.next_power_of_2(n))
    dw, db = torch.empty_like(w), torch.empty_like(w)
    summed = rows - dropped_rows if rows > dropped_rows else rows
    for partial, out in ((pw, dw), (pb, db)):
        _sum_rows_kernel[(triton.cdiv(n, 128),)](partial, out, summed, n, BLOCK=128)
    return dx, dw, db


@variant("right")
def right(x, w, b):
    return _forward(x, w, b)


@backward("right")
def right_backward(dy, x, w, b, mean, rstd):
    return _backward(dy, x, w, b, mean, rstd)


@variant("drops_block")
def drops_block(x, w, b):
    return _forward(x, w, b)


@backward("drops_block")
def drops_block_backward(dy, x, w, b, mean, rstd):
    return _backward(dy, x, w, b, mean, rstd, dropped_rows=4)


@variant("racy")
def racy(x, w, b):
    return _forward(x, w, b)


@backward("racy")
def racy_backward(dy, x, w, b, mean, rstd):
    return _backward(dy, x, w, b, mean, rstd, racy=True)


@variant("no_eps")
def no_eps(x, w, b):
    return _forward(x, w, b)


@backward("no_eps")
def no_eps_backward(dy, x, w, b, mean, rstd):
    return _backward(dy, x, w, b, mean, rstd, no_eps=True)


@variant("stale")
def stale(x, w, b):
    return _forward(x, w, b)


@backward("stale")
def stale_backward(dy, x, w, b, mean, rstd):
    return _backward(dy, x, w, b, mean, rstd, stale=True)
