"""Every discovered implementation, whatever the op: Triton kernels checked under the interpreter (or on the GPU),
CUDA sources built through load_inline, and on a GPU every row of every op checked."""
import pytest
import torch
import triton
import triton.language as tl

import triton_src
from compare import build, check, discover, env, runner, schedule, worker

OPS = [discover.load_op(n) for n in discover.op_names()]
TRITON_ROWS = [(op, impl) for op in OPS for impl in discover.implementations(op) if impl.backend == "triton"]
# Each .cu once: the passes of an op with a gradient (layernorm-backward, ...) build their op's file.
CUDA_OPS = [op for op in OPS if discover.cuda_variants(op.name) and discover.base_name(op.name) == op.name]


@pytest.mark.slow
@pytest.mark.parametrize("op,impl", TRITON_ROWS, ids=[i.name.replace("triton", op.name) for op, i in TRITON_ROWS])
def test_triton_kernel_matches_reference(op, impl, device):
    """Every check case of the runner's schedule, called in this process (the interpreter without a GPU)."""
    gpu = device.type == "cuda"
    if not gpu and op.interpreter_unfit:
        pytest.skip(f"{op.name}: {op.interpreter_unfit}")
    dtypes = op.dtypes if gpu else [d for d in op.dtypes if d != torch.bfloat16]  # the interpreter's bf16 tl.dot
    worker._use_interpreter_autotune_stub(impl)
    fn = impl.load()
    for case in schedule.check_cases(op, impl.name, list(dtypes), gpu, [], 0):
        r = check.run_case_in_process(op, impl.name, fn, case, device)
        assert r.ok, f"{impl.name} {r.dtype} {r.shape} {r.inputs}: {r.status}: {r.message}"


# The norms' triton:split takes rows past 16K only, longer than the interpreter's shapes: its own path is checked
# here at a few such rows (an odd N, a chunk count that is not a power of two, rows far from zero).
SPLIT_CASES = [(torch.float32, (3, 20001), "random"), (torch.float16, (5, 16400), "random"),
               (torch.float32, (2, 40000), "large offset")]


@pytest.mark.slow
@pytest.mark.parametrize("op_name", ["layernorm-backward", "rmsnorm-backward"])
def test_norm_split_step_matches_reference_on_rows_it_splits(op_name, device):
    op = discover.load_op(op_name)
    impl = next(i for i in discover.implementations(op) if i.name == "triton:split")
    worker._use_interpreter_autotune_stub(impl)
    fn = impl.load()
    for dtype, shape, inputs in SPLIT_CASES:
        r = check.check_case(op, impl.name, fn, dtype, shape, device, 0, inputs)
        assert r.ok, f"{impl.name} {r.dtype} {r.shape} {r.inputs}: {r.status}: {r.message}"


# softmax's triton:packed takes fp16/bf16 rows of 16K-32K elements only, longer than the interpreter's shapes: its own
# path is checked here, on random rows and every special input set (-inf, NaN, subnormals, ...), at 3 rows of an
# odd number of words (padding words in every row's tile). The interpreter takes fp16.
PACKED_CASES = [(torch.float16, (3, 16386), name)
                for name in (check.RANDOM, *discover.load_op("softmax").special_inputs)]


@pytest.mark.slow
def test_softmax_packed_step_matches_reference_on_its_own_rows(device, monkeypatch):
    from triton_src import softmax

    op = discover.load_op("softmax")
    impl = next(i for i in discover.implementations(op) if i.name == "triton:packed")
    fn = impl.load()
    monkeypatch.setattr(softmax, "_tuned", lambda x: pytest.fail("triton:packed handed its own rows to v4"))
    cases = PACKED_CASES + ([(torch.bfloat16, (5, 20002), check.RANDOM)] if device.type == "cuda" else [])
    for dtype, shape, inputs in cases:
        r = check.check_case(op, impl.name, fn, dtype, shape, device, 0, inputs)
        assert r.ok, f"{impl.name} {r.dtype} {r.shape} {r.inputs}: {r.status}: {r.message}"


# layernorm's triton:occupancy takes forward rows of 8K-16K elements only, longer than the interpreter's shapes: its
# own path (v2's kernel under its register cap) is checked here at an odd N and a power of two, rows far from zero
# among them, in the forward and in the forward + backward pass (whose backward is v4's).
OCCUPANCY_CASES = [(torch.float32, (3, 8193), "random"), (torch.float16, (2, 16384), "random"),
                   (torch.float32, (2, 12000), "large offset")]


@pytest.mark.slow
@pytest.mark.parametrize("op_name", ["layernorm", "layernorm-fwd-bwd"])
def test_layernorm_occupancy_step_matches_reference_on_its_own_rows(op_name, device, monkeypatch):
    from triton_src import layernorm

    op = discover.load_op(op_name)
    impl = next(i for i in discover.implementations(op) if i.name == "triton:occupancy")
    worker._use_interpreter_autotune_stub(impl)
    fn = impl.load()
    monkeypatch.setattr(layernorm, "_fused", lambda *a: pytest.fail("triton:occupancy handed its own rows to v2"))
    for dtype, shape, inputs in OCCUPANCY_CASES:
        r = check.check_case(op, impl.name, fn, dtype, shape, device, 0, inputs)
        assert r.ok, f"{impl.name} {r.dtype} {r.shape} {r.inputs}: {r.status}: {r.message}"


# The norms' triton:reread, triton:newest_first and triton:tile_ahead take forward rows past REREAD_AFTER_COLS
# only, longer than the interpreter's shapes. With the threshold lowered here, their own path (tiles, the
# statistics merged across tiles or lanes, the second pass from either end, the tile after the last masked off) is
# checked on rows whose tiles (every autotune config runs) are several full ones and a short last one, full ones
# only, or one short one: an odd N, a power of two and rows far from zero, forward and forward + backward.
REREAD_CASES = [(torch.float32, (3, 5001), "random"), (torch.float16, (2, 4096), "random"),
                (torch.float32, (2, 6000), "large offset")]


def _norm_step(op_name, impl_name):
    """(its triton_src module, the op, the row, its function) of a norm's Triton step, ready for the interpreter."""
    import importlib

    norm = importlib.import_module(f"triton_src.{discover.base_name(op_name)}")
    op = discover.load_op(op_name)
    impl = next(i for i in discover.implementations(op) if i.name == impl_name)
    worker._use_interpreter_autotune_stub(impl)
    return norm, op, impl, impl.load()


def _check_cases(op, impl, fn, cases, device):
    for dtype, shape, inputs in cases:
        r = check.check_case(op, impl.name, fn, dtype, shape, device, 0, inputs)
        assert r.ok, f"{impl.name} {r.dtype} {r.shape} {r.inputs}: {r.status}: {r.message}"


@pytest.mark.slow
@pytest.mark.parametrize("impl_name", ["triton:reread", "triton:newest_first", "triton:tile_ahead"])
@pytest.mark.parametrize("op_name", ["layernorm", "rmsnorm", "layernorm-fwd-bwd"])
def test_norm_reread_step_matches_reference_on_its_own_rows(op_name, impl_name, device, monkeypatch):
    norm, op, impl, fn = _norm_step(op_name, impl_name)
    monkeypatch.setattr(norm, "REREAD_AFTER_COLS", 1024)
    handed_down = "_occupancy" if hasattr(norm, "_occupancy") else "_fused"
    monkeypatch.setattr(norm, handed_down, lambda *a: pytest.fail(f"{impl_name} handed its own rows down"))
    assert all(shape[1] > norm.REREAD_AFTER_COLS for _, shape, _ in REREAD_CASES)
    _check_cases(op, impl, fn, REREAD_CASES, device)


# The norms' triton:exchange takes backward rows past EXCHANGE_AFTER_COLS, split over programs that wait for each
# other; the interpreter runs programs one at a time, so there it takes only rows one program holds. With the
# threshold lowered and a program's columns raised, its own kernel (the slots, the rows' dx two rows late, the
# groups' partial rows) is checked here on groups of one to three rows; rows shared by programs are checked on the
# GPU (tests/test_norms.py).
EXCHANGE_CASES = [(torch.float32, (3, 5001), "random"), (torch.float16, (5, 3000), "random"),
                  (torch.float32, (2, 6000), "large offset")]


def _exchange_thresholds_lowered(norm, monkeypatch) -> None:
    """The backward's exchange steps taking rows past 1024 columns (RMSNorm's 16-bit rows too), 8192 a program."""
    from triton_src import layernorm

    monkeypatch.setattr(layernorm, "EXCHANGE_AFTER_COLS", 1024)
    monkeypatch.setattr(layernorm, "EXCHANGE_COLS", 8192)
    if hasattr(norm, "HALF_EXCHANGE_AFTER_COLS"):
        monkeypatch.setattr(norm, "HALF_EXCHANGE_AFTER_COLS", 1024)


@pytest.mark.slow
@pytest.mark.parametrize("impl_name", ["triton:exchange", "triton:exchange_ahead", "triton:lean_exchange",
                                       "triton:lean_ahead"])
@pytest.mark.parametrize("op_name", ["layernorm-backward", "rmsnorm-backward"])
def test_norm_exchange_step_matches_reference_on_its_own_rows(op_name, impl_name, device, monkeypatch):
    from triton_src import layernorm

    norm, op, impl, fn = _norm_step(op_name, impl_name)
    _exchange_thresholds_lowered(norm, monkeypatch)
    monkeypatch.setattr(norm, "_split_backward", lambda *a: pytest.fail(f"{impl_name} handed its own rows down"))
    assert all(layernorm.EXCHANGE_AFTER_COLS < shape[1] <= layernorm.EXCHANGE_COLS for _, shape, _ in EXCHANGE_CASES)
    _check_cases(op, impl, fn, EXCHANGE_CASES, device)



# softmax's triton:exchange (v7) takes rows past MAX_CACHED_COLS split over programs that wait for each other's
# (max, sum) pairs (v8 and v9 too, on wider parts; v9 zeroing the words without a counter a row); on the interpreter
# only rows one program holds, reached by raising a program's columns. Their kernel (the pairs' words, each row's y a
# row late, the groups of rows, the words left zeroed) is checked here on groups of one to three rows; rows shared
# by programs on the GPU (tests/test_softmax_kept_words.py, tests/test_own_kernels.py and the op's checks).
SOFTMAX_EXCHANGE_CASES = [(torch.float32, (3, 40000), "random"), (torch.float16, (5, 33000), "with -inf"),
                          (torch.float32, (4, 34000), "inf and nan"), (torch.float32, (2, 33000), "large magnitudes")]


@pytest.mark.slow
@pytest.mark.parametrize("impl_name", ["triton:exchange", "triton:wide_exchange", "triton:own_zeroing"])
def test_softmax_exchange_step_matches_reference_and_leaves_its_words_zeroed(impl_name, device, monkeypatch):
    from triton_src import layernorm
    from triton_src import softmax

    monkeypatch.setattr(layernorm, "EXCHANGE_COLS", 65536)
    monkeypatch.setattr(softmax, "WIDE_EXCHANGE_COLS", 65536)
    monkeypatch.setattr(softmax, "_packed", lambda *a: pytest.fail(f"{impl_name} handed its own rows down"))
    kept = []

    def words(x, count):  # zeroed, as _exchange_words hands them, and kept to look at after the call
        kept.append(torch.zeros(count, device=x.device, dtype=torch.int64))
        return kept[-1]

    monkeypatch.setattr(softmax, "_exchange_words", words)
    op = discover.load_op("softmax")
    impl = next(i for i in discover.implementations(op) if i.name == impl_name)
    assert all(shape[1] > softmax.MAX_CACHED_COLS for _, shape, _ in SOFTMAX_EXCHANGE_CASES)
    _check_cases(op, impl, impl.load(), SOFTMAX_EXCHANGE_CASES, device)
    assert kept and all(int(w.count_nonzero()) == 0 for w in kept)  # every row's words and counter zeroed again


def test_softmax_wide_exchange_halves_v7s_parts_and_rows_a_program(monkeypatch):
    """v8's plan on a GPU of 132 multiprocessors (the plan as the launch would make it, on a stand-in tensor): at
    32 x 256K half of v7's parts a row and half its rows a program, over the same resident programs; rows with more
    parts than there are resident programs are left to v6 by both."""
    from triton_src import layernorm
    from triton_src import softmax

    monkeypatch.setattr(layernorm, "sm_count", lambda device: 132)
    monkeypatch.setattr(triton_src, "runs_ptx", lambda x: True)
    x = torch.empty((32, 262144), device="meta")
    v7 = layernorm.exchange_programs(x, softmax.MAX_CACHED_COLS)
    v8 = layernorm.exchange_programs(x, softmax.MAX_CACHED_COLS, softmax.WIDE_EXCHANGE_COLS)
    assert v7 == (128, 2, 16) and v8 == (64, 4, 8), (v7, v8)
    long_rows = torch.empty((4, 4000000), device="meta")
    assert layernorm.exchange_programs(long_rows, softmax.MAX_CACHED_COLS, softmax.WIDE_EXCHANGE_COLS) is None
    meta = layernorm.exchange_forward_meta(v8[0], softmax.WIDE_EXCHANGE_COLS)
    assert meta["BLOCK"] == softmax.WIDE_EXCHANGE_COLS and meta["SLOTS"] >= 2 * v8[0]


@pytest.mark.parametrize("dtype,cols,taken", [(torch.float16, 16384, False), (torch.bfloat16, 16384, False),
                                              (torch.bfloat16, 16385, True), (torch.float32, 16384, True),
                                              (torch.float32, 8192, False)])
def test_rmsnorm_exchange_steps_leave_16_bit_rows_of_16k_to_v2(dtype, cols, taken, monkeypatch):
    """RMSNorm's exchange steps take fp32 rows past 8K and 16-bit rows past 16K (triton_src/rmsnorm.py says why);
    LayerNorm's take both past 8K. Program columns raised so that one program holds a row (as the interpreter
    needs)."""
    from triton_src import layernorm, rmsnorm

    monkeypatch.setattr(layernorm, "EXCHANGE_COLS", 32768)
    x = torch.empty((4, cols), dtype=dtype)
    assert (rmsnorm.backward_exchange_programs(x) is not None) == taken
    assert (layernorm.exchange_programs(x) is not None) == (cols > layernorm.EXCHANGE_AFTER_COLS)


# The norms' triton:exchange_forward takes forward rows past FORWARD_EXCHANGE_AFTER_COLS the same way: with the
# threshold lowered and a program's columns raised, its own kernel (the parts' sums and squares about their means,
# merged; each row's y one row late, the rows' loads two ahead; the statistics of part 0) is checked on groups of
# one to three rows, forward and forward + backward; rows shared by programs are checked on the GPU.
@pytest.mark.slow
@pytest.mark.parametrize("lag", [1, 2])  # 1 as shipped; 2 as bench/exchange_configs.py can launch it
@pytest.mark.parametrize("op_name", ["layernorm", "rmsnorm", "layernorm-fwd-bwd", "rmsnorm-fwd-bwd"])
def test_norm_exchange_forward_step_matches_reference_on_its_own_rows(op_name, lag, device, monkeypatch):
    from triton_src import layernorm

    norm, op, impl, fn = _norm_step(op_name, "triton:exchange_forward")
    monkeypatch.setattr(layernorm, "FORWARD_EXCHANGE_LAG", lag)
    monkeypatch.setattr(layernorm, "FORWARD_EXCHANGE_AFTER_COLS", 1024)
    monkeypatch.setattr(norm, "FORWARD_EXCHANGE_AFTER_COLS", 1024)
    _exchange_thresholds_lowered(norm, monkeypatch)
    monkeypatch.setattr(norm, "_reread", lambda *a: pytest.fail("triton:exchange_forward handed its own rows down"))
    monkeypatch.setattr(norm, "_split_backward", lambda *a: pytest.fail("its backward handed its own rows down"))
    assert all(1024 < shape[1] <= layernorm.EXCHANGE_COLS for _, shape, _ in EXCHANGE_CASES)
    _check_cases(op, impl, fn, EXCHANGE_CASES, device)


@triton.jit
def _row_moments_of_parts(x_ptr, slots_ptr, out_ptr, n, parts, BLOCK: tl.constexpr, SLOTS: tl.constexpr):
    """A row's mean and squares about it as exchange_forward's programs compute them, its parts taken one after
    another by one program: each part's sums published to the row's slots, then the slots merged."""
    from triton_src.layernorm import part_moments, publish_sums, read_slots, row_moments

    for part in range(0, parts):
        cols = part * BLOCK + tl.arange(0, BLOCK)
        mask = cols < n
        s, squares = part_moments(tl.load(x_ptr + cols, mask=mask, other=0.0), mask,
                                  tl.minimum(n - part * BLOCK, BLOCK).to(tl.float32))
        publish_sums(slots_ptr, 0, part, parts, s, squares, True)
    got_a, got_b, words, present = read_slots(slots_ptr, 0, parts, True, SLOTS, True)
    mean, squares = row_moments(got_a, got_b, words, present, n, BLOCK, SLOTS)
    tl.store(out_ptr, mean)
    tl.store(out_ptr + 1, squares)


@pytest.mark.parametrize("n", [1000, 1024, 17])
def test_exchange_forward_merges_its_parts_statistics_as_one_row(n, device):
    """On a GPU a forward row is shared by programs; a row's mean and squares are merged from its parts' sums and
    squares about their own means. Far from zero and rising along the row, the parts' means differ by more than the
    row's spread within a part: the merge must add each part's distance from the row's mean, and Σx² less (Σx)²/N in
    fp32 would lose the squares to cancellation. Parts of 64 columns, the last one short but for N = 1024."""
    from triton_src import layernorm

    block = 64
    parts = triton_src.cdiv(n, block)
    cols = torch.arange(n, dtype=torch.float64)
    x = (1e4 + 100 * cols / n + torch.sin(cols)).to(torch.float32)
    slots = layernorm.exchange_slots(1, parts, device)
    out = torch.empty(2, device=device, dtype=torch.float32)
    _row_moments_of_parts[(1,)](x.to(device), slots, out, n, parts, BLOCK=block,
                                SLOTS=triton_src.next_power_of_2(2 * parts))
    exact = x.to(torch.float64)
    mean, squares = out.cpu().to(torch.float64).tolist()
    assert mean == pytest.approx(exact.mean().item(), rel=1e-6)
    assert squares == pytest.approx(((exact - exact.mean()) ** 2).sum().item(), rel=1e-4)


@pytest.mark.slow
@pytest.mark.skipif(not env.nvcc_path(), reason="needs the CUDA toolkit (nvcc)")
@pytest.mark.parametrize("op", CUDA_OPS, ids=[op.name for op in CUDA_OPS])
def test_cuda_source_builds_through_load_inline(op):
    result = build.build(op.name, op.cuda_flags, progress=False)
    assert result.kernels, "ptxas reported no kernels"
    assert all(k.registers > 0 for k in result.kernels)
    for variant in discover.cuda_variants(op.name):
        assert callable(discover.cuda_op(op.name, variant))


@pytest.mark.slow
@pytest.mark.skipif(not env.nvcc_path(), reason="needs the CUDA toolkit (nvcc)")
def test_compile_error_points_at_the_users_file_and_line(tmp_path, monkeypatch):
    for header in build.SHARED_HEADERS:
        (tmp_path / header).write_text((env.CUDA_DIR / header).read_text())
    good = (env.CUDA_DIR / "gelu.cu").read_text()
    lines = good.splitlines()
    target = next(i for i, line in enumerate(lines) if "tanhf(u)" in line)
    lines[target] = lines[target].replace("tanhf(u)", "tanhf(undefined_name)")
    (tmp_path / "broken.cu").write_text("\n".join(lines).replace("lab_gelu", "lab_broken"))
    monkeypatch.setattr(env, "CUDA_DIR", tmp_path)
    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(build.BuildError) as info:
        build.build("broken", progress=False)
    assert f"broken.cu:{target + 1}:" in str(info.value) and "undefined_name" in str(info.value)


def test_build_key_changes_with_source_and_flags(tmp_path, monkeypatch):
    for name in ("gelu.cu", *build.SHARED_HEADERS):
        (tmp_path / name).write_text((env.CUDA_DIR / name).read_text())
    monkeypatch.setattr(env, "CUDA_DIR", tmp_path)
    key = build.build_key("gelu", [])
    assert key == build.build_key("gelu", [])
    assert key != build.build_key("gelu", ["-DX"])
    (tmp_path / "gelu.cu").write_text((tmp_path / "gelu.cu").read_text() + "\n// edited\n")
    assert key != build.build_key("gelu", [])
    (tmp_path / "lab_device.cuh").write_text((tmp_path / "lab_device.cuh").read_text() + "\n")
    assert build.build_key("gelu", []) != key


def test_processes_building_one_module_at_once_take_turns_and_all_load_it(tmp_path, monkeypatch):
    """With --gpus, one lane per GPU builds the same .cu at the same moment; two compilers writing one folder broke
    each other's build. The lock makes one build and the others load its module."""
    import os
    import threading
    import time

    for name in ("gelu.cu", *build.SHARED_HEADERS):
        (tmp_path / name).write_text((env.CUDA_DIR / name).read_text())
    monkeypatch.setattr(env, "CUDA_DIR", tmp_path)
    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(env, "nvcc_path", lambda: "nvcc")
    monkeypatch.setattr(env, "prepare_cuda_build_env", lambda: None)
    compiling, overlaps, compiles = [], [], []

    def fake_load(path, name, build_dir, extra_flags, verbose):
        if not verbose:  # a warm load: the module must be complete
            assert (build_dir / "module.so").read_text() == "complete"
            return
        overlaps.extend(compiling)
        compiling.append(name)
        compiles.append(name)
        (build_dir / "module.so").write_text("partial")
        time.sleep(0.2)
        os.write(2, b"ptxas info    : Compiling entry function '_Z6kernelv' for 'sm_90'\n"
                    b"ptxas info    : Used 8 registers, 0 bytes smem\n")
        (build_dir / "module.so").write_text("complete")
        compiling.remove(name)

    monkeypatch.setattr(build, "_load", fake_load)
    results, errors = [], []

    def one():
        try:
            results.append(build.build("gelu", progress=False))
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not overlaps and len(compiles) == 1
    assert sorted(r.built_now for r in results) == [False, False, False, True]
    assert all(r.kernels and r.kernels[0].registers == 8 for r in results)


def test_ptxas_report_is_parsed():
    log = """ptxas info    : Compiling entry function '_Z15gelu_vec_kernelIfEvPKT_PS0_l' for 'sm_90'
ptxas info    : Function properties for _Z15gelu_vec_kernelIfEvPKT_PS0_l
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 380 bytes cmem[0]
"""
    (k,) = build.parse_ptxas(log)
    assert (k.base, k.registers, k.spill_bytes, k.shared_bytes, k.stack_bytes) == ("gelu_vec_kernel", 40, 8, 2048, 8)


@pytest.mark.gpu
@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_every_cuda_and_triton_row_passes_on_the_gpu(op):
    """The lab's own kernels, through the same runner as `python -m compare` (which also checks the torch rows)."""
    result = runner.run_op(op, runner.Options(impls=["cuda", "triton"], time=False, capture=False, progress=False))
    bad = [(r.impl, r.status, r.message) for r in result.rows if r.status not in ("ok", "skipped")]
    assert not bad
    assert {c.impl for c in result.checks} == {r.impl for r in result.rows if r.status == "ok"}


def test_cuda_bindings_build_error_messages_from_text_only():
    """TORCH_CHECK given integers or sizes crashed the process on the GPU machines (a g++ with its own C++
    runtime builds the extension there); LAB_CHECK turns every part into text first. See cuda_src/lab_torch.h."""
    offenders = []
    for path in sorted(env.CUDA_DIR.glob("*.cu")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "TORCH_CHECK" in line:
                offenders.append(f"{env.relpath(path)}:{n}: use LAB_CHECK / LAB_CHECK_TYPE instead")
    assert not offenders, "\n".join(offenders)


def test_kernel_base_names_from_mangled_symbols():
    assert build._base_name("_Z15gelu_vec_kernelIfEvPKT_PS0_l") == "gelu_vec_kernel"
    assert build._base_name("_ZN12_GLOBAL__N_113planted_zerosIfEEvPKT_PS1_l") == "planted_zeros"
    assert build._base_name("_ZN3lab6detail6kernelEv") == "kernel"
    assert build._base_name("plain_c_kernel") == "plain_c_kernel"


@pytest.mark.parametrize("rows", [1, 8, 16, 300])
def test_the_norms_sum_of_partial_rows_fits_its_tile_to_the_rows_and_sums_every_column(rows, device):
    """The Triton backward steps' second stage (triton_src/layernorm.py sum_partials): a tile of the partial rows
    there are (up to SUM_ROWS) and as many more columns, each gradient's columns summed over every partial row."""
    from triton_src import layernorm

    tile_rows, tile_cols = layernorm.sum_tile(rows)
    assert tile_rows == min(layernorm.SUM_ROWS, triton.next_power_of_2(rows)) and tile_rows >= min(rows, 128)
    assert tile_rows * tile_cols == layernorm.SUM_ROWS * layernorm.SUM_COLS
    n = 3 * tile_cols + 5  # columns past a whole number of tiles
    part = torch.randn((2, rows, n), generator=torch.Generator().manual_seed(rows)).to(device)
    out = torch.full((2, n), float("nan"), device=device)
    layernorm.sum_partials(part, out)
    torch.testing.assert_close(out.double().cpu(), part.double().sum(dim=1).cpu(), rtol=1e-5, atol=1e-4)
