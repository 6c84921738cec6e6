"""fp8 e4m3 quantization with a scale per group of G elements of a row, in Triton. Spec (the bits of q and of the
scales): specs/fp8_quant.py. CUDA side: cuda_src/fp8_quant.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/fp8_quant.md):
  v1 basic    one program per group: the group loaded once (the next power of two, masked), its absmax, the scale,
              the quotients and their cast, in registers
  v2 rows     one program per row of groups as a [groups, G] tile: with G = 128 a program moves a whole row instead
              of 128 elements (a fraction of a kilobyte, too little per program to keep the memory busy); warps
              autotuned
  v3 rcp      v2 with each quotient from the group's correctly rounded reciprocal and two tl.fma (Markstein's
              correction: the same bits as tl.div_rn, a few instructions instead of a division per element), as
              cuda:rcp does; a row whose smallest scale is below 2^-80 divides (there an element below 2^-100 could
              leave a subnormal remainder; above it such elements quantize to zero either way)

Two things the spec pins down and Triton makes explicit: the division is tl.div_rn (IEEE, correctly rounded;
Triton's `/` on float32 is an approximate division, off by up to two ulps, which moves some quotients across a
rounding boundary of the cast), and the cast is `.to(tl.float8e4nv)` (e4m3fn), which rounds to nearest even and
saturates at ±448.
"""
import torch
import triton
import triton.language as tl

from compare.spec import variant
from compare.validate import InputError, check_inputs

E4M3_MAX = tl.constexpr(448.0)
SMALLEST_RECIPROCAL_SCALE = tl.constexpr(2.0**-80)  # v3: rows with a smaller scale divide


@triton.jit
def _quantize(x, axis: tl.constexpr):
    """The scales of x's groups along `axis` (absmax / 448 correctly rounded, 1 for a group of zeros) and x's
    quotients cast to e4m3."""
    absmax = tl.max(tl.abs(x), axis=axis)
    scale = tl.where(absmax == 0.0, 1.0, tl.div_rn(absmax, E4M3_MAX))
    q = tl.div_rn(x, tl.expand_dims(scale, axis)).to(tl.float8e4nv)
    return q, scale


# ---- v1 basic: one program per group. -----------------------------------------------------------------------------
@triton.jit
def fp8_quant_basic_kernel(x_ptr, q_ptr, scale_ptr, group, GROUP_BLOCK: tl.constexpr):
    g = tl.program_id(0).to(tl.int64)  # the group's index over the whole tensor; int64: M·N may pass 2^31
    j = tl.arange(0, GROUP_BLOCK)
    mask = j < group
    x = tl.load(x_ptr + g * group + j, mask=mask, other=0.0).to(tl.float32)
    q, scale = _quantize(x[None, :], 1)
    tl.store(q_ptr + g * group + j[None, :], q, mask=mask[None, :])
    tl.store(scale_ptr + g + tl.arange(0, 1), scale)


def _checked(x, group):
    check_inputs("fp8_quant", ("x", x), ndim=2, dtypes=(torch.float32, torch.bfloat16))
    if group.numel() != 1 or group.device.type != "cpu" or group.dtype != torch.int64:
        raise InputError(f"fp8_quant: group, the group size, must be one int64 on the CPU (got shape "
                         f"{tuple(group.shape)}, dtype {group.dtype}, on {group.device})")
    m, n = x.shape
    g = int(group.item())
    if g < 1 or n % g:
        raise InputError(f"fp8_quant: the group size {g} must divide N = {n}")
    q = torch.empty((m, n), dtype=torch.float8_e4m3fn, device=x.device)
    return q, torch.empty((m, n // g), dtype=torch.float32, device=x.device), g


@variant("basic")
def basic(x: torch.Tensor, group: torch.Tensor):
    q, scales, g = _checked(x, group)
    if x.numel():
        fp8_quant_basic_kernel[(scales.numel(),)](x, q, scales, g, GROUP_BLOCK=triton.next_power_of_2(g))
    return q, scales


# ---- v2 rows: one program per row of groups, a [groups, G] tile. ---------------------------------------------------
@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (4, 8, 16)], key=["n", "group"])
@triton.jit
def fp8_quant_rows_kernel(x_ptr, q_ptr, scale_ptr, n, group, GROUPS_BLOCK: tl.constexpr,
                          GROUP_BLOCK: tl.constexpr, BY_RECIPROCAL: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    k = tl.arange(0, GROUPS_BLOCK)[:, None]  # the group within the row
    j = tl.arange(0, GROUP_BLOCK)[None, :]  # the element within the group
    groups = n // group
    mask = (k < groups) & (j < group)
    at = row * n + k * group + j
    x = tl.load(x_ptr + at, mask=mask, other=0.0).to(tl.float32)
    kk = tl.arange(0, GROUPS_BLOCK)
    if BY_RECIPROCAL:  # v3
        absmax = tl.max(tl.abs(x), axis=1)
        scale = tl.where(absmax == 0.0, 1.0, tl.div_rn(absmax, E4M3_MAX))
        # Padding groups (past the row's last) have scale 1 and do not lower the minimum.
        if tl.min(tl.where(kk < groups, scale, 1.0), axis=0) >= SMALLEST_RECIPROCAL_SCALE:
            quotients = _quotients_by_reciprocal(x, scale[:, None])
        else:
            quotients = tl.div_rn(x, scale[:, None])
        q = quotients.to(tl.float8e4nv)
    else:
        q, scale = _quantize(x, 1)
    tl.store(q_ptr + at, q, mask=mask)
    tl.store(scale_ptr + row * groups + kk, scale, mask=kk < groups)


def _by_rows(x: torch.Tensor, group: torch.Tensor, by_reciprocal: bool):
    q, scales, g = _checked(x, group)
    m, n = x.shape
    if x.numel():
        fp8_quant_rows_kernel[(m,)](x, q, scales, n, g, GROUPS_BLOCK=triton.next_power_of_2(n // g),
                                    GROUP_BLOCK=triton.next_power_of_2(g), BY_RECIPROCAL=by_reciprocal)
    return q, scales


@variant("rows")
def rows(x: torch.Tensor, group: torch.Tensor):
    return _by_rows(x, group, by_reciprocal=False)


# ---- v3 rcp: v2's kernel with BY_RECIPROCAL, the quotients from the reciprocal. --------------------------------
@triton.jit
def _quotients_by_reciprocal(x, scale):
    """x / scale correctly rounded, scale broadcast along x's last axis: q = x·r with r = 1/scale correctly rounded,
    the remainder x − q·scale exact in one fma, q corrected by remainder·r in a second (Markstein's theorem: r within
    half an ulp of 1/scale and q within one ulp of x/scale give the correctly rounded quotient, while the remainder
    is not subnormal)."""
    reciprocal = tl.div_rn(1.0, scale)
    q = x * reciprocal
    return tl.fma(tl.fma(-q, scale, x), reciprocal, q)


@variant("rcp")
def rcp(x: torch.Tensor, group: torch.Tensor):
    return _by_rows(x, group, by_reciprocal=True)
