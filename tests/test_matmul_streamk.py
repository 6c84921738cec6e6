"""cuda:streamk (matmul v8) splits tiles along K between blocks, where the tile count leaves the last wave ragged,
and the block holding a tile's first K tile adds the others' partial sums in block order. So its output must not
change from call to call on the same inputs (the order of the sum is fixed by the shape and the GPU), every call
must find the flags it waits on reset by the call before (a stale flag would hang the owner or let it read partial
sums early), and a split tile must agree with the reference as a whole tile does (GPU only)."""
import pytest
import torch

from compare import check, discover

OP = discover.load_op("matmul")
HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
# Tiles of 128×256 and K tiles of 64: (1000, 1000, 1000) has 32 tiles of 16 K tiles, fewer tiles than SMs, so every
# tile is split; (4096, 4096, 512) has 512 tiles (a ragged last wave on 132 or 114 SMs) of 8 K tiles; 4096 × 1304 ×
# 4104 has an N tail in a tile and a K tail in a split one.
SHAPES = [(1000, 1000, 1000), (4096, 4096, 512), (4096, 1304, 4104)]


@pytest.mark.gpu
@pytest.mark.skipif(not HOPPER, reason="needs a Hopper GPU (compute capability 9.0): cuda:streamk is built for sm_90a only")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_repeated_calls_agree_bit_for_bit_and_with_the_reference(shape, dtype):
    fn = next(i for i in discover.implementations(OP) if i.name == "cuda:streamk").load()
    device = torch.device("cuda")
    a, b = OP.make_inputs(shape, dtype, device, torch.Generator(device=device).manual_seed(1))
    outputs = [fn(a, b) for _ in range(3)]
    torch.cuda.synchronize()
    for later in outputs[1:]:
        assert torch.equal(later.view(torch.int16), outputs[0].view(torch.int16))
    ok, message, _ = check.compare(outputs[0], check.reference(OP, (a, b)), OP.tolerances(dtype, shape), dtype)
    assert ok, message
