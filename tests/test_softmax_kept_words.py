"""softmax's CUDA v9 (cuda:grid_ring) and Triton v7 to v9 (triton:exchange, triton:wide_exchange, triton:own_zeroing)
pass their programs' (max, sum) pairs through words in global memory that must be zero when a call starts; each call
leaves them zero, and the rows keep them between calls (one buffer a device and stream, a graph's own under capture).
What would go wrong if they were not: a call reading the pairs an earlier call left behind writes that call's
normalisation (right only where the inputs' rows happen to share it), and two streams' calls at once would read each
other's. Each case here changes the inputs between calls, so stale pairs fail against torch.softmax in float64. The
harness's checks cover the rows, dtypes and special inputs."""
import pytest
import torch

from compare import discover

pytestmark = pytest.mark.gpu
HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0)
# Few long rows (CUDA: 4 groups of 33 blocks on 132 SMs, 8 rows a group), many (a long ring), one row a group.
SHAPES = [(32, 262144), (300, 65600), (3, 70000)]


@pytest.fixture(scope="module",
                params=["cuda:grid_ring", "triton:exchange", "triton:wide_exchange", "triton:own_zeroing"])
def row(request):
    """Each row's function."""
    if request.param == "cuda:grid_ring" and not HOPPER:
        pytest.skip("cuda:grid_ring takes its own path on GPUs with bulk copies (compute capability 9.0 on)")
    op = discover.load_op("softmax")
    return next(i for i in discover.implementations(op) if i.name == request.param).load()


def _inputs(shape, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    # Rows far apart in scale, so that one call's (max, sum) pairs are wrong for the next call's rows.
    scale = torch.rand((shape[0], 1), device="cuda", generator=g) * 20 + seed
    return (torch.randn(shape, device="cuda", generator=g) * scale).to(dtype)


def _assert_right(y, x):
    expected = torch.softmax(x.double(), dim=-1)
    tol = {torch.float32: 2.0**-18, torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}[x.dtype]
    torch.testing.assert_close(y.double(), expected, rtol=tol, atol=2.0**-50 if x.dtype == torch.float32 else 2**-24)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_calls_one_after_another_each_normalise_their_own_rows(row, shape, dtype):
    for seed in range(3):
        x = _inputs(shape, dtype, seed)
        _assert_right(row(x), x)


def test_calls_on_two_streams_at_once_keep_their_pairs_apart(row):
    shape = (32, 262144)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    xs = [_inputs(shape, torch.float32, seed) for seed in (1, 2)]
    torch.cuda.synchronize()
    outputs = [[], []]
    for _ in range(20):
        for s, x, out in zip(streams, xs, outputs):
            with torch.cuda.stream(s):
                out.append(row(x))
    torch.cuda.synchronize()
    for x, out in zip(xs, outputs):
        for y in out:
            _assert_right(y, x)


def test_a_captured_call_replays_right_on_new_inputs_and_leaves_eager_calls_right(row):
    shape = (32, 262144)
    static_x = _inputs(shape, torch.float32, 0)
    _assert_right(row(static_x), static_x)  # compiled and loaded before the capture
    side = torch.cuda.Stream()  # a stream no eager call has used: its words are made inside the capture
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        static_y = row(static_x)
    for seed in (3, 4, 5):
        x = _inputs(shape, torch.float32, seed)
        static_x.copy_(x)
        graph.replay()
        torch.cuda.synchronize()
        _assert_right(static_y, x)
        _assert_right(row(x), x)  # eager, between replays
