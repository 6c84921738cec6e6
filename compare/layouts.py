"""Non-contiguous layouts for the checks: the same values as a tensor, stored the ways real callers store them.

Each layout returns a view with exactly the values of its argument (bit for bit, NaN and -0 included) in memory laid
out differently, so an implementation must honour the view's strides and storage offset or refuse the input (with
an error that says "contiguous"). Wherever a layout leaves memory between or around the values, that memory is
NaN: a kernel that ignores a stride, a row pitch or the offset reads NaN, and NaN never passes a check.

  every other element     the elements of a buffer twice as wide along the last dimension, every other one
                          (1-D and up): strides (..., 2N, 2), as every non-contiguous check used to be
  offset slice            1-D: a slice of a NaN-filled buffer starting one element in: contiguous, but its base is
                          misaligned (not a multiple of 16 bytes, not even of the element pair)
  transposed              2-D and up: the same matrix stored column-major, t.mT.contiguous().mT: strides (1, M)
                          in the last two dimensions (no padding: a kernel reading it as row-major gets the
                          transpose's values)
  column slice            2-D and up: the columns of a NaN-filled buffer 3 columns wider, starting at column 1: row
                          pitch N + 3 and a base misaligned by one element
  row slice with padding  2-D and up: every other row of a NaN-filled buffer with 2M rows whose rows are padded to
                          a pitch of a multiple of 64 elements past N: row stride 2·pitch, column stride 1

`names_for(ndim)` lists the layouts that apply to inputs of that many dimensions; `applies(name, t)` says whether
one applies to a given tensor (an op's inputs may differ in rank).
"""
from __future__ import annotations

from typing import Callable

import torch

COLUMN_OFFSET = 1  # the column slice's first column in its buffer (odd: a misaligned base)
COLUMN_EXTRA = 3  # columns the column slice's buffer has beyond N (its row pitch is N + 3)
PITCH_MULTIPLE = 64  # the padded rows' pitch is a multiple of this many elements, at least one past N
OFFSET = 1  # the offset slice's first element in its buffer


def _filled(shape, like: torch.Tensor) -> torch.Tensor:
    """A buffer of `shape` filled with NaN (or, for a non-float dtype, its largest value), like `like`."""
    if like.is_floating_point() or like.is_complex():
        fill = float("nan")
    elif like.dtype == torch.bool:
        fill = True
    else:
        fill = torch.iinfo(like.dtype).max
    return torch.full(tuple(shape), fill, dtype=like.dtype, device=like.device)


def every_other_element(t: torch.Tensor) -> torch.Tensor:
    view = _filled((*t.shape[:-1], 2 * t.shape[-1]), t)[..., ::2]
    view.copy_(t)
    return view


def offset_slice(t: torch.Tensor) -> torch.Tensor:
    n = t.shape[0]
    view = _filled((n + OFFSET + 1,), t)[OFFSET:OFFSET + n]
    view.copy_(t)
    return view


def transposed(t: torch.Tensor) -> torch.Tensor:
    # t.mT.contiguous().mT, but always a fresh buffer with exactly these strides (torch would hand back t itself
    # for a single row or column, which it counts as contiguous either way).
    *lead, m, n = t.shape
    strides, step = [1, m], m * n
    for size in reversed(lead):  # leading dimensions dense around each column-major matrix
        strides.insert(0, step)
        step *= size
    view = torch.empty_strided(t.shape, strides, dtype=t.dtype, device=t.device)
    view.copy_(t)
    return view


def column_slice(t: torch.Tensor) -> torch.Tensor:
    n = t.shape[-1]
    view = _filled((*t.shape[:-1], n + COLUMN_EXTRA), t)[..., COLUMN_OFFSET:COLUMN_OFFSET + n]
    view.copy_(t)
    return view


def padded_pitch(n: int) -> int:
    """The row pitch of the row slice's buffer: the next multiple of PITCH_MULTIPLE above N (so at least one
    padding element per row)."""
    return (n // PITCH_MULTIPLE + 1) * PITCH_MULTIPLE


def row_slice_with_padding(t: torch.Tensor) -> torch.Tensor:
    *lead, m, n = t.shape
    view = _filled((*lead, 2 * m, padded_pitch(n)), t)[..., ::2, :n]
    view.copy_(t)
    return view


LAYOUTS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "every other element": every_other_element,
    "offset slice": offset_slice,
    "transposed": transposed,
    "column slice": column_slice,
    "row slice with padding": row_slice_with_padding,
}

# The ranks each layout applies to: (least, most), most None for no limit.
_RANKS = {
    "every other element": (1, None),
    "offset slice": (1, 1),
    "transposed": (2, None),
    "column slice": (2, None),
    "row slice with padding": (2, None),
}


def _rank_ok(name: str, ndim: int) -> bool:
    least, most = _RANKS[name]
    return ndim >= least and (most is None or ndim <= most)


def names_for(ndim: int) -> list[str]:
    """The layouts that apply to inputs of `ndim` dimensions, in the order the checks run them."""
    return [name for name in LAYOUTS if _rank_ok(name, ndim)]


def applies(name: str, t: torch.Tensor) -> bool:
    """Whether layout `name` applies to tensor t: by its rank, and only where it has elements (an empty tensor has
    no layout to get wrong)."""
    return _rank_ok(name, t.dim()) and t.numel() > 0


applicable = applies
