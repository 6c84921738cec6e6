"""Whether a row's timings can be what they claim: which kernels a call launched and where, and whether a speed is
physically possible. Parent side: it reads what the worker reports and the row's source text, nothing else.

Kernel accounting. One call per row and dtype runs under torch.profiler (compare.worker.kernels_launched). A CUDA
or Triton row whose call launches no kernel at all did no work on the GPU (a cached answer, a host computation); a
row whose kernels run on another stream than the one the harness times on escapes the timing events: both fail.
Kernels that come from neither the row's .cu nor its Triton JIT functions (torch's own kernels called from a
"hand-written" row, cuBLAS) are flagged in the report: allowed, but no longer the row's own work, and not in its
line count.

Plausibility. A memory-bound row faster than IMPLAUSIBLE_OVER_COPY times the faster of two copies measured in the
same run (a plain copy of the same bytes, and the large-buffer copy that gives the GPU's memory bandwidth), or a
compute-bound row above the GPU's published peak, measured something other than its work: the timing is refused,
with the reason. Both copies count: at small sizes the same-bytes copy (a cudaMemcpyAsync) ramps up more slowly
than a kernel of one well-shaped wave, and a norm of 16 MB beat it by a third on an H100 (results/nvidia-h100*/
layernorm.md at 4096x1024), while with L2 flushed no call moves its bytes much faster than the memory's bandwidth.
"""
from __future__ import annotations

import re

from . import callgraph
from .discover import Impl
from .results import KernelAccount

# A kernel moving the op's bytes can match a copy of them, and beat it a little (a copy's launch and tail cost
# more than a fused kernel's at some sizes), but not by this much.
IMPLAUSIBLE_OVER_COPY = 1.15

# Dense peak TFLOP/s from the vendors' data sheets, by a fragment of torch.cuda.get_device_name(): tensor cores for
# fp16/bf16 (without sparsity), the FP32 units for float32 (TF32 is off in every row: compare/specs/matmul.py).
SPEC_PEAK_TFLOPS = {
    "H200": {"float16": 989.4, "bfloat16": 989.4, "float32": 66.9},
    "H100 80GB HBM3": {"float16": 989.4, "bfloat16": 989.4, "float32": 66.9},  # SXM
    "H100 NVL": {"float16": 835.0, "bfloat16": 835.0, "float32": 60.0},
    "H100 PCIe": {"float16": 756.0, "bfloat16": 756.0, "float32": 51.2},
    "A100": {"float16": 312.0, "bfloat16": 312.0, "float32": 19.5},
    "L40S": {"float16": 362.1, "bfloat16": 362.1, "float32": 91.6},
}

_KERNEL_NAME = re.compile(r"^(?:void\s+)?(?:[\w:]*::)?(\w+)")


def kernel_base_name(name: str) -> str:
    """'void gelu_vec_kernel<float>(float const*, float*, long)' -> 'gelu_vec_kernel'; a Triton kernel is named
    after its @triton.jit function already."""
    m = _KERNEL_NAME.match(name.strip())
    return m.group(1) if m else name


def is_kernel(activity_name: str) -> bool:
    """CUPTI names memsets and copies 'Memset (Device)', 'Memcpy DtoD (Device -> Device)', ...; kernels by name."""
    return not re.match(r"^(Memset|Memcpy)\b", activity_name)


def own_kernel_names(impl: Impl) -> set[str]:
    if impl.backend == "cuda":
        return set(callgraph.cuda_kernel_names(impl.source, impl.variant))
    if impl.backend == "triton":
        return set(callgraph.triton_kernel_names(impl.source, impl.variant))
    return set()


def account(impl: Impl, dtype: str, shape: str, launched: dict) -> KernelAccount:
    """One row's call, classified: its kernels, those not its own, work on other streams, and the problem that
    fails the row ("" if none)."""
    activities = launched["activities"]
    timing_stream = launched["timing_stream"]
    kernels = [a for a in activities if is_kernel(a["name"])]
    own = own_kernel_names(impl)
    foreign = sorted({kernel_base_name(a["name"]) for a in kernels
                      if impl.backend in ("cuda", "triton") and kernel_base_name(a["name"]) not in own})
    other = sorted({f"{kernel_base_name(a['name'])} (stream {a['stream']})" for a in activities
                    if timing_stream is not None and a["stream"] != timing_stream})
    problem = ""
    if not kernels:
        problem = ("launched no kernel: its call did no work on the GPU (a result computed on the host or kept "
                   "from an earlier call?)")
    elif other:
        problem = (f"runs work on another stream than the one its call is timed on ({', '.join(other)}): the "
                   f"timing events do not see it; launch on torch.cuda.current_stream()")
    elif timing_stream is None:
        problem = "the stream the call is timed on could not be identified in the profile"
    return KernelAccount(impl=impl.name, dtype=dtype, shape=shape,
                         kernels=sorted({kernel_base_name(a["name"]) for a in kernels}),
                         launches=len(kernels), kernel_us=round(sum(a["us"] for a in kernels), 2),
                         foreign=foreign, other_streams=other, problem=problem)


def spec_peak_tflops(gpu_name: str, dtype: str) -> float | None:
    for fragment, peaks in SPEC_PEAK_TFLOPS.items():
        if fragment.lower() in gpu_name.lower():
            return peaks.get(dtype)
    return None


def implausible(timing, roofline: str, gpu_name: str) -> str:
    """Why a timing cannot be right, or ''. Needs the timing's ceilings filled in (runner.relate_to_ceilings)."""
    if roofline == "memory" and timing.fraction_of_same_bytes_copy is not None:
        # Over the faster copy: the large-buffer one's fraction where it was measured (fraction_of_ceiling).
        over_bandwidth = timing.fraction_of_ceiling if timing.fraction_of_ceiling is not None else float("inf")
        if min(timing.fraction_of_same_bytes_copy, over_bandwidth) > IMPLAUSIBLE_OVER_COPY:
            return (f"implausible: {timing.gbps:.0f} GB/s at {timing.dtype} {timing.shape} is "
                    f"{timing.fraction_of_same_bytes_copy:.2f}x a copy of the same bytes and {over_bandwidth:.2f}x "
                    f"the large-buffer copy bandwidth, both measured in the same run (at most "
                    f"{IMPLAUSIBLE_OVER_COPY}x the faster is believable): the call cannot have moved its bytes")
    if roofline == "compute":
        peak = spec_peak_tflops(gpu_name, timing.dtype)
        if peak and timing.tflops > peak:
            return (f"implausible: {timing.tflops:.0f} TFLOP/s at {timing.dtype} {timing.shape} is above this GPU's "
                    f"published peak of {peak:g} TFLOP/s: the call cannot have done its flops")
    return ""
