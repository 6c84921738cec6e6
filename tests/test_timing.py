"""The timing tools measure what they claim (GPU only)."""
import time

import pytest
import torch

from compare import timing

pytestmark = pytest.mark.gpu


def test_copy_bandwidth_is_plausible():
    gbps = timing.copy_bandwidth(torch.device("cuda"), nbytes=1 << 28)
    assert 300 < gbps < 20_000


def test_events_profiler_and_graph_agree_on_a_plain_kernel():
    x = torch.randn(1 << 26, device="cuda")
    fn = lambda: x.mul(2.0)  # noqa: E731
    _, events, _, samples = timing.measure(fn)
    assert samples >= timing.MIN_SAMPLES
    prof = timing.profiler_kernel_ms(fn)
    _, graph, _ = timing.measure_graph([fn])
    assert not timing.profiler_disagrees(events, prof)
    assert 0.5 * events < prof <= 1.1 * events
    assert graph <= 1.1 * events


def test_work_on_another_stream_is_caught_by_the_profiler_cross_check():
    # One kernel of ~16 µs per call on the side stream, less than the L2 flush do_bench queues before each call: the
    # side stream never backs up. With more side work per call than that (8 kernels of 0.12 ms were tried), its
    # queue fills, the host blocks in the launches between the two events, and the events time that wait instead.
    x = torch.randn(1 << 23, device="cuda")  # 32 MB read and 32 MB written per call
    side = torch.cuda.Stream()

    def escapes_the_events():
        with torch.cuda.stream(side):  # the events are recorded on the current stream and never see this
            x.mul(2.0)

    _, events, _, _ = timing.measure(escapes_the_events)
    prof = timing.profiler_kernel_ms(escapes_the_events)
    torch.cuda.synchronize()
    assert timing.profiler_disagrees(events, prof), (events, prof)


def test_launch_overhead_shows_in_events_and_vanishes_in_graphs():
    x = torch.randn(1024, device="cuda")

    def many_tiny_launches():
        y = x
        for _ in range(50):
            y = y + 1
        return y

    _, events, _, _ = timing.measure(many_tiny_launches)
    _, graph, _ = timing.measure_graph([many_tiny_launches])
    assert graph < events


def test_same_bytes_copy_reaches_copy_bandwidth_when_large_and_falls_short_when_small():
    device = torch.device("cuda")
    l2 = timing.l2_bytes(device)
    peak = timing.copy_bandwidth(device, nbytes=1 << 28)  # 256 MB read + 256 MB written
    large = timing.same_bytes_copy(2 << 28, device, l2, dtype="float32", shape="large")
    small = timing.same_bytes_copy(1 << 20, device, l2, dtype="float32", shape="small", graph=True)
    assert 0.75 * peak < large.gbps < 1.25 * peak, (large.gbps, peak)
    # 512 KB each way: launch latency and one partial wave dominate, whatever the memory system could do.
    assert small.gbps < 0.5 * large.gbps, (small.gbps, large.gbps)
    assert small.graph_median_ms is not None  # --graph times the copy as it times the rows


def test_host_work_longer_than_the_kernel_is_marked_host_bound():
    small = torch.randn(1 << 16, device="cuda")
    large = torch.randn(1 << 26, device="cuda")  # 512 MB moved: about 0.1-0.2 ms on a current GPU

    def slow_host():  # 300 µs of Python before a kernel of a few microseconds
        end = time.perf_counter() + 300e-6
        while time.perf_counter() < end:
            pass
        return small.mul(2.0)

    bound = timing.time_calls(slow_host, impl="slow host", dtype="float32", shape="64K", nbytes=1 << 19,
                              flops=0)
    assert bound.host_bound and bound.host_us >= 250, bound
    fine = timing.time_calls(lambda: large.mul(2.0), impl="large", dtype="float32", shape="64M",
                             nbytes=1 << 29, flops=0)
    assert fine.median_ms < timing.HOST_CHECK_BELOW_MS and fine.host_us is not None and not fine.host_bound, fine


def test_an_in_place_row_is_restored_before_each_timed_call(monkeypatch):
    """A row that overwrites its input (an in-place peer: lab_prepare / lab_timed / lab_restore) does the same work
    on the same values at every timed call: its recorded outputs are one call's result, not that of hundreds of
    calls piled up, and the restore is outside the events."""
    from compare import worker

    def prepare(x):
        return x.clone(), x.clone()

    def add_one_in_place(work, pristine):
        return work.add_(1.0)

    def restore(work, pristine):
        work.copy_(pristine)

    def row(x):
        return add_one_in_place(*prepare(x))

    row.lab_prepare, row.lab_timed, row.lab_restore = prepare, add_one_in_place, restore
    monkeypatch.setitem(worker._row, "fn", row)
    sets = [(torch.randn(1 << 20, device="cuda"),) for _ in range(2)]
    out = worker.time_cell(sets, "peer:planted", "float32", "1M", 8 << 20, 0, graph=False, profile_check=False)
    assert torch.equal(out.first, sets[out.first_set][0] + 1) and torch.equal(out.last, sets[out.last_set][0] + 1)


def test_a_copy_after_the_clean_flush_owes_no_write_back():
    """do_bench's memset leaves the L2 dirty, and the timed call pays for writing it back; after clean_flush_fn
    (bench/host_overhead.py --clean-flush) the same copy is faster (results/nvidia-h200/flush-write-back/)."""
    src = torch.ones(48 << 20, dtype=torch.uint8, device="cuda")  # 96 MB moved: more than the L2 holds
    dst = torch.empty_like(src)
    copy = lambda: dst.copy_(src)  # noqa: E731
    after_memset = timing.measure(copy)[1]
    after_clean = timing.measure(copy, flush=timing.clean_flush_fn())[1]
    assert after_clean < after_memset, (after_clean, after_memset)
