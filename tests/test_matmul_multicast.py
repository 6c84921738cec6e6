"""cuda:multicast (v8) runs clusters of two blocks on the tiles one above the other, each block copying half of their B
tile into both blocks' shared memory. What only it can get wrong: a block reading its partner's half before it has
landed, or overwriting a stage its partner still reads (wrong C in whole tiles, or a hang: in a comparison the row's
time limit ends it, here nothing does, so run these under one, such as `timeout`); the block of rank 1 past the last
tile row, where M has an odd number of them (it must store nothing, and still copy its half of B for its partner);
clusters walking more pairs than there are clusters. Each case twice, on fresh inputs, against the float64 reference
(GPU only: the kernel is Hopper's)."""
import pytest
import torch

from compare import check, discover

OP = discover.load_op("matmul")
HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
SHAPES = [
    (128, 256, 64),  # one tile: a pair whose second tile is past M
    (300, 264, 520),  # three tile rows: the last pair's rank-1 block past M; M, N and K tails
    (4096, 4096, 136),  # 256 pairs: more pairs than clusters, a short K
    (1, 8, 4096),  # one row: rank 1's A fully past M, zero-filled
    (2048, 8200, 1024),  # N past a multiple of the tile: the last tile column partial
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_the_multicast_step_is_right_on_pairs_of_tiles(shape, dtype):
    if not HOPPER:
        pytest.skip("cuda:multicast is built for compute capability 9.0 only")
    fn = next(i for i in discover.implementations(OP) if i.name == "cuda:multicast").load()
    for seed in range(2):
        r = check.check_case(OP, "cuda:multicast", fn, dtype, shape, torch.device("cuda"), seed)
        assert r.ok, f"{shape} {dtype} seed {seed}: {r.status}: {r.message}"
