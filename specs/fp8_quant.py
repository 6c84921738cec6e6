"""fp8 quantization: x (M, N) in float32 or bfloat16 becomes q (M, N) in float8_e4m3fn and one float32 scale per
group of G consecutive elements of a row, so that q · scale ≈ x. The shape is (M, N, G): G = N is one scale per row,
G = 128 the 1×128 blocks DeepSeek-V3 quantizes its activations in. The group size reaches the rows as the input
`group`, one int64 on the CPU (a size, like N, known to the host when it launches).

Fixed by the spec:
  * scale = absmax(group) / 448 (448 is e4m3's largest finite value), within one float32 ulp of the correctly
    rounded quotient: a kernel may divide, or multiply by a rounded 1/448 (as torch does when it divides by a
    number on the GPU); a group of zeros has scale 1 (its q is all zeros, and q · scale never meets 0 · inf);
  * q = e4m3(x / scale), bit for bit, with the row's own scale for its group: the float32 division correctly
    rounded, then rounded to the nearest e4m3 value, a tie going to the value whose last mantissa bit is 0 (round
    half to even: PTX's cvt.rn.satfinite and Triton's conversion), saturating at ±448 (|x / scale| passes 448 only
    by the rounding of the scale, by a few float32 ulps, and rounds to 448 either way).
So the checks hold the scales within one ulp and q exact, given those scales (Op.reference_given_outputs): a kernel
that multiplies x by 1/scale, or divides with an approximate division (Triton's default `/`, CUDA's fast-math one,
inductor's unless told otherwise: Op.compile_divides_exactly), or rounds the cast another way, is wrong in some
elements, and the special input set of ties finds a wrong rounding of the cast, or a product with 1/scale, at once.
x is finite (an inf or NaN would make its group's scale inf or NaN, which this spec leaves undefined).

The reference rounds to e4m3 by searching the table of e4m3's 127 non-negative finite values (no conversion
routine of torch's is trusted with it; tests/test_fp8_quant.py holds torch's CPU conversion to the same answers).

Bytes: x read (its itemsize), q written (1 byte), the scales written (4 bytes per group); one division per element
counted as its flop. CUDA: cuda_src/fp8_quant.cu. Triton: triton_src/fp8_quant.py.
"""
import torch

from compare.spec import Op, Tolerance

E4M3_MAX = 448.0
# e4m3fn's non-negative finite values in code order (0x00 .. 0x7E; 0x7F is NaN), increasing with the code: a value's
# index here is its code, and the code's last bit is the mantissa's.
E4M3_VALUES = torch.arange(0, 127, dtype=torch.uint8).view(torch.float8_e4m3fn).to(torch.float64)


def round_to_e4m3(v: torch.Tensor) -> torch.Tensor:
    """v (float64 holding finite values) rounded to the nearest e4m3 value, ties to an even code, saturating at
    ±448; returned as float64."""
    table = E4M3_VALUES.to(v.device)
    a = v.abs().clamp(max=E4M3_MAX)
    above = torch.searchsorted(table, a).clamp(max=table.numel() - 1)  # the first value >= a
    below = (above - 1).clamp(min=0)
    hi, lo = table[above], table[below]
    take_lo = (a - lo < hi - a) | ((a - lo == hi - a) & (below % 2 == 0))
    magnitude = torch.where((a == hi) | ~take_lo, hi, lo)
    return torch.where(v < 0, -magnitude, magnitude)


def scales_of(x: torch.Tensor, group: int) -> torch.Tensor:
    """absmax / 448 per group of each row, correctly rounded to float32 (the float64 quotient of two float32 values,
    rounded once more to float32, is the correctly rounded float32 quotient: 53 >= 2·24 + 2 bits), 1 for a group of
    zeros; float64 holding float32 values, shape (M, N / G)."""
    m, n = x.shape
    absmax = x.reshape(m, n // group, group).abs().amax(dim=-1)
    scale = (absmax / E4M3_MAX).to(torch.float32).to(torch.float64)
    return torch.where(absmax == 0, torch.ones_like(scale), scale)


def quantized(x: torch.Tensor, group: int, scales: torch.Tensor) -> torch.Tensor:
    """e4m3(x / scale) for each group's scale (float64 holding float32 values, shape (M, N / G)), the float32
    division correctly rounded; float64, shape (M, N)."""
    m, n = x.shape
    quotient = (x.reshape(m, n // group, group) / scales[..., None]).to(torch.float32).to(torch.float64)
    return round_to_e4m3(quotient).reshape(m, n)


def reference(x, group):
    g = int(group.item())
    scales = scales_of(x, g)
    return quantized(x, g, scales), scales


def reference_given_scales(ref, outputs, x, group):
    """q's reference given the scales the row returned: where a group's scale is within one ulp of the correctly
    rounded one (the spec's freedom), e4m3 of x divided by that scale; elsewhere the plain reference's (and the
    scales fail their own check)."""
    q_ref, scales_ref = ref
    own = outputs[1].detach().to(device=x.device, dtype=torch.float32)
    right = scales_ref.to(torch.float32)
    near = (own == right) | (own == torch.nextafter(right, torch.full_like(right, torch.inf))) | (
        own == torch.nextafter(right, torch.full_like(right, -torch.inf)))
    scales = torch.where(near, own, right).to(torch.float64)
    return quantized(x, int(group.item()), scales), scales_ref


def torch_eager(x, group):
    """The same steps in torch's float32 ops and its cast to float8_e4m3fn (round to nearest even; it turns values
    past 448 into NaN, so they are clamped first). On the GPU torch divides by the number 448 as a product with its
    rounded reciprocal (within the scales' ulp); q's division, by a tensor, is a true one."""
    g = int(group.item())
    m, n = x.shape
    groups = x.float().reshape(m, n // g, g)
    absmax = groups.abs().amax(dim=-1, keepdim=True)
    scale = torch.where(absmax == 0, torch.ones_like(absmax), absmax / E4M3_MAX)
    q = (groups / scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return q.reshape(m, n), scale.squeeze(-1)


def fake(x, group):
    """The outputs' metadata on fake tensors: the number of groups per row depends on the value of `group`, a
    size the fake tensors cannot know, so it is a fresh dynamic size."""
    m, n = x.shape
    groups = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty((m, n), dtype=torch.float8_e4m3fn), x.new_empty((m, groups), dtype=torch.float32)


def _group_tensor(shape) -> torch.Tensor:
    m, n, g = shape
    if g < 1 or n % g:
        raise ValueError(f"fp8_quant: shape {shape}: the group size G = {g} must divide N = {n}")
    return torch.tensor([g], dtype=torch.int64)


def make_inputs(shape, dtype, device, generator):
    """x from a normal distribution, its rows' scales spread over a few orders of magnitude (a factor 2^k, k in
    [-8, 8], per row)."""
    m, n, _ = shape
    x = torch.randn((m, n), device=device, generator=generator, dtype=torch.float32)
    k = torch.randint(-8, 9, (m, 1), device=device, generator=generator).to(torch.float32)
    return (x * torch.exp2(k)).to(dtype), _group_tensor(shape)


def ties(shape, dtype, device, generator):
    """Every element a midpoint between two neighbouring e4m3 values, normal and subnormal, below and above even
    codes alike, with random signs, times its row's factor c (1, 3, 5 or 7, times 2^k); each group's first element
    448 · c, so its scale is exactly c and x / scale exactly the midpoint. A cast that rounds ties away from zero,
    or truncates, is wrong in about half of them; so is a kernel that multiplies by a rounded 1/scale (1/3 is not a
    float), which moves a quotient off its tie. Every value is exact in bfloat16 (at most 8 significant bits)."""
    m, n, g = shape
    table = E4M3_VALUES.to(device)
    mids = (table[:-1] + table[1:]) / 2  # every midpoint below 448: 4 significant bits
    pick = torch.randint(0, mids.numel(), (m, n), device=device, generator=generator)
    sign = torch.randint(0, 2, (m, n), device=device, generator=generator) * 2 - 1
    odd = torch.tensor([1.0, 3.0, 5.0, 7.0], device=device, dtype=torch.float64)
    c = odd[torch.randint(0, 4, (m, 1), device=device, generator=generator)] * torch.exp2(
        torch.randint(-4, 5, (m, 1), device=device, generator=generator).to(torch.float64))
    x = (mids[pick] * sign * c).reshape(m, n // g, g)
    x[..., 0] = (E4M3_MAX * c).reshape(m, 1)
    return x.reshape(m, n).to(dtype), _group_tensor(shape)


def zero_groups(shape, dtype, device, generator):
    """One group in three all zeros (scale 1, q all zeros), the others as make_inputs makes them."""
    x, group = make_inputs(shape, dtype, device, generator)
    m, n, g = shape
    zero = torch.arange(m * (n // g), device=device).reshape(m, n // g, 1) % 3 == 1
    return x.reshape(m, n // g, g).masked_fill(zero, 0).reshape(m, n), group


def wide_range(shape, dtype, device, generator):
    """Each element scaled by 2^k, k uniform in [-24, 0]: most of each group far below its absmax, so q runs through
    e4m3's subnormals (below 2^-6) and rounds to zero."""
    x, group = make_inputs(shape, dtype, device, generator)
    k = torch.randint(-24, 1, x.shape, device=device, generator=generator).to(torch.float32)
    return (x.float() * torch.exp2(k)).to(dtype), group


EXACT = Tolerance(atol=0.0, rtol=0.0, ulps=0)
ONE_ULP = Tolerance(atol=0.0, rtol=0.0, ulps=1)

OP = Op(
    name="fp8_quant",
    summary="fp8 e4m3 quantization with one scale per group of G elements of a row (memory-bound)",
    make_inputs=make_inputs,
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: shape[0] * shape[1] * (dtype.itemsize + 1) + 4 * shape[0] * (shape[1] // shape[2]),
    flops=lambda shape: shape[0] * shape[1],
    # One element; an odd N in one group; groups of 32, 64 and 128; a row of 16K in one group (more than one program
    # or block holds at once in some steps); every bench shape joins them.
    check_shapes=[(1, 1, 1), (3, 7, 7), (5, 384, 128), (3, 256, 64), (4, 96, 32), (4, 1000, 1000), (2, 16384, 16384)],
    bench_shapes=[(4096, 4096, 4096), (4096, 4096, 128), (8192, 7168, 7168), (8192, 7168, 128), (16384, 8192, 128)],
    quick_bench_shapes=[(4096, 4096, 4096), (4096, 4096, 128)],
    interpret_shapes=[(1, 1, 1), (3, 7, 7), (2, 256, 128), (3, 96, 32)],
    shape_names=("M", "N", "G"),
    dtypes=(torch.float32, torch.bfloat16),
    special_inputs={"ties": ties, "zero groups": zero_groups, "wide range": wide_range},
    # Its float32 -> float8 cast (triton/runtime/interpreter.py, _convert_float) rounds ties up, drops the carry
    # of a rounding into the exponent (1.97 becomes 1, not 2) and flushes subnormal results to zero.
    interpreter_unfit="Triton's interpreter casts float32 to float8 wrongly (ties, carries into the exponent, "
                      "subnormals); tests/test_fp8_quant.py holds everything but the cast exact there",
    tolerances={torch.float32: (EXACT, ONE_ULP), torch.bfloat16: (EXACT, ONE_ULP)},
    output_names=("q", "scales"),
    output_dtypes=lambda dtype: (torch.float8_e4m3fn, torch.float32),
    reference_given_outputs=reference_given_scales,
    compile_divides_exactly=True,
    fake=fake,
)
