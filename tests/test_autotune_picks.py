"""compare.worker.autotune_picks: what a row's autotuned Triton kernel chose, per tuning key, for the json's
build entries (chosen_configs). Run under the interpreter here, with the autotuner's timing replaced so that the
config each key gets is known."""
import torch
import triton
import triton.language as tl

from compare import worker

CONFIGS = [triton.Config({"BLOCK": 16}, num_warps=1), triton.Config({"BLOCK": 32}, num_warps=2)]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


def test_each_tuning_key_is_listed_with_its_parameters_dtypes_and_the_config_it_got():
    timings = iter([[2.0] * 3, [1.0] * 3, [1.0] * 3, [2.0] * 3])  # n = 100 gets BLOCK 32, n = 50 BLOCK 16

    def bench(call, quantiles=None, **_):
        call()
        return next(timings)

    scale_kernel.do_bench = bench
    for n, dtype in ((100, torch.float32), (50, torch.float16)):
        x = torch.ones(n, dtype=dtype)
        y = torch.empty_like(x)
        scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        assert torch.equal(y, 2 * x)
    picks = worker.autotune_picks(scale_kernel)
    assert len(picks) == 2
    assert picks[0].startswith("n=100, torch.float32: BLOCK: 32, num_warps: 2")
    assert picks[1].startswith("n=50, torch.float16: BLOCK: 16, num_warps: 1")


def test_a_kernel_that_does_not_autotune_has_no_picks():
    assert worker.autotune_picks(scale_kernel.fn) == []
