from pathlib import Path

from compare import callgraph, count, discover, env

PY = '''"""Module docstring: not code."""
import triton

# a comment
X = 3  # trailing comment: the line still counts


@triton.jit
def kernel(p):
    """Docstring."""
    return p + X


def helper():
    return 1


@variant("v")
def wrapper(p):

    return kernel[(1,)](p) + helper()


def unused():
    return 2
'''

CU = '''// header comment
#include "lab.h"
cudaError_t launch(int n);

#ifdef __CUDACC__
constexpr float kScale = 2.0f;  // used by the kernel only

/* a block
   comment */
__device__ float twice(float v) { return kScale * v; }

template <typename T>
__global__ void my_kernel(T* y, int n) {
  if (n) y[0] = twice(1.0f);
}

cudaError_t launch(int n) {
  my_kernel<float><<<1, 1>>>(nullptr, n);
  return cudaGetLastError();
}
#else
int binding(int n) { return launch(n); }
int other(int n) { return n; }
TORCH_LIBRARY(lab_demo, m) {
  m.def("v(Tensor x) -> Tensor");
  m.def("w(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(lab_demo, CUDA, m) {
  m.impl("v", &binding);
  m.impl("w", &other);
}
#endif
'''


def test_python_rule_skips_blank_comment_and_docstring_lines():
    assert count.count_python(PY) == 12


def test_python_split_follows_references_from_the_variant(tmp_path):
    path = tmp_path / "demo.py"
    path.write_text(PY)
    lc = count.count_triton(path, "v", "triton:v")
    # kernel: decorator, def, return + the constant X it reads; host: wrapper (3 lines) + helper (2)
    assert (lc.kernel, lc.host) == (4, 5)
    assert callgraph.triton_kernel_names(path, "v") == ["kernel"]


def test_c_rule_and_split(tmp_path):
    path = tmp_path / "demo.cu"
    path.write_text(CU)
    lc = count.count_cuda(path, "v", "cuda:v")
    # kernel: kScale (1) + twice (1) + my_kernel (4); host: prototype (1) + launch (4) + binding (1) +
    # the two registration lines naming "v"
    assert (lc.kernel, lc.host) == (6, 8)
    other = count.count_cuda(path, "w", "cuda:w")
    assert (other.kernel, other.host) == (0, 3)


def test_comments_and_strings_are_blanked_without_moving_lines():
    text = 'a = "// not a comment";  // comment\n/* x\n y */ b;\n'
    stripped = callgraph.strip_c_comments(text)
    assert stripped.count("\n") == text.count("\n")
    assert "comment" not in stripped and "b;" in stripped
    assert count.c_code_lines(text) == {1, 3}


def test_inductor_kernels_and_call_are_counted():
    wrapper = (
        "from torch import empty\n"
        "k0 = async_compile.triton('k0', '''\nimport triton\n@triton.jit\ndef k0(x):\n    # c\n    pass\n''')\n"
        "def call(args):\n    x, = args\n    return x\n"
    )
    lc, kernels = count.count_inductor(wrapper, "torch:compile")
    assert kernels == 1 and lc.kernel == 4 and lc.host == 3


def test_every_discovered_implementation_has_kernel_and_host_lines():
    for name in discover.op_names():
        op = discover.load_op(name)
        for impl in discover.implementations(op):
            if impl.backend == "cuda":
                lc = count.count_cuda(Path(impl.source), impl.variant, impl.name)
            elif impl.backend == "triton":
                lc = count.count_triton(Path(impl.source), impl.variant, impl.name)
            else:
                continue
            assert lc.kernel > 0 and lc.host > 0, lc


def test_kernel_names_behind_launch_bounds_and_default_template_arguments(tmp_path):
    path = tmp_path / "demo.cu"
    path.write_text('''#ifdef __CUDACC__
template <typename T, int kTile = 128>
__global__ void __launch_bounds__(256, 2) tiled_kernel(T* y) {
  y[0] = T(kTile);
}
void launch(float* y) { tiled_kernel<float><<<1, 256>>>(y); }
#else
int binding(int n) { launch(nullptr); return n; }
TORCH_LIBRARY(lab_demo, m) { m.def("v(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(lab_demo, CUDA, m) { m.impl("v", &binding); }
#endif
''')
    assert callgraph.cuda_kernel_names(path, "v") == ["tiled_kernel"]
    assert count.count_cuda(path, "v", "cuda:v").kernel == 4


# ---- What a row reaches in the lab's shared files counts in that row ----------------------------------------------
HEADER = '''#pragma once
#include "lab_base.h"
// y = 2x on the device
__device__ float twice(float v) { return 2.0f * v; }

__device__ float thrice(float v) {
  return 3.0f * v;
}
#define CHECK_N(n) \\
  if ((n) < 0) return -1
inline int blocks(int n) { return (n + 255) / 256; }
'''

BASE = '''#pragma once
inline int clamp_blocks(int b) {
  return b > 65535 ? 65535 : b;
}
'''

ROWS = '''#include "helpers.cuh"
#ifdef __CUDACC__
__global__ void twice_kernel(float* y) { y[0] = twice(y[0]); }
__global__ void plain_kernel(float* y) { y[0] = 1.0f; }
int launch_twice(float* y, int n) {
  CHECK_N(n);
  twice_kernel<<<clamp_blocks(blocks(n)), 256>>>(y);
  return 0;
}
int launch_plain(float* y, int n) { plain_kernel<<<1, 1>>>(y); return n; }
#else
int twice_binding(int n) { return launch_twice(nullptr, n); }
int plain_binding(int n) { return launch_plain(nullptr, n); }
TORCH_LIBRARY(lab_demo, m) {
  m.def("twice(Tensor x) -> Tensor");
  m.def("plain(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(lab_demo, CUDA, m) {
  m.impl("twice", &twice_binding);
  m.impl("plain", &plain_binding);
}
#endif
'''


def _rows(tmp_path):
    (tmp_path / "helpers.cuh").write_text(HEADER)
    (tmp_path / "lab_base.h").write_text(BASE)
    path = tmp_path / "demo.cu"
    path.write_text(ROWS)
    return path


def test_a_row_counts_the_header_helpers_it_calls(tmp_path):
    lc = count.count_cuda(_rows(tmp_path), "twice", "cuda:twice")
    # own: twice_kernel (1) | launch_twice (5) + twice_binding (1) + 2 registration lines;
    # helpers.cuh: twice (1) as kernel | CHECK_N (2) + blocks (1) as host; lab_base.h (through helpers.cuh):
    # clamp_blocks (3) as host. thrice is called by nobody: not counted.
    assert (lc.kernel, lc.host) == (1 + 1, 5 + 1 + 2 + 2 + 1 + 3)
    assert lc.helper_lines == 1 + 2 + 1 + 3
    assert lc.helpers == ["helpers.cuh:CHECK_N", "helpers.cuh:blocks", "helpers.cuh:twice", "lab_base.h:clamp_blocks"]


def test_a_row_that_calls_no_helper_counts_none(tmp_path):
    lc = count.count_cuda(_rows(tmp_path), "plain", "cuda:plain")
    assert (lc.kernel, lc.host, lc.helper_lines, lc.helpers) == (1, 1 + 1 + 2, 0, [])


def test_moving_helpers_into_a_header_does_not_change_the_count(tmp_path):
    path = _rows(tmp_path)
    split = count.count_cuda(path, "twice", "cuda:twice")
    inline = tmp_path / "inline"
    inline.mkdir()
    body = [line for line in (HEADER + BASE).splitlines() if not line.startswith(("#pragma", "#include"))]
    (inline / "demo.cu").write_text(ROWS.replace('#include "helpers.cuh"', "\n".join(body)))
    whole = count.count_cuda(inline / "demo.cu", "twice", "cuda:twice")
    assert (whole.kernel, whole.host, whole.helpers) == (split.kernel, split.host, [])


def test_header_helpers_of_the_lab_count_in_the_rows_that_call_them():
    gelu = env.CUDA_DIR / "gelu.cu"
    vec = count.count_cuda(gelu, "vec", "cuda:vec")
    naive = count.count_cuda(gelu, "naive", "cuda:naive")
    assert {"lab_device.cuh:load_packet", "lab_device.cuh:store_packet", "lab_torch.h:unary_elementwise",
            "lab_torch.h:check_cuda_input", "lab_torch.h:LAB_CHECK"} <= set(vec.helpers)
    assert "lab_device.cuh:load_packet" not in naive.helpers and "lab_torch.h:unary_elementwise" in naive.helpers
    assert not any(h.startswith("lab_device.cuh:block_reduce") for h in vec.helpers)
    # the packet helpers (Packet, load_packet, store_packet: 14 code lines today) are vec's alone
    assert vec.helper_lines >= naive.helper_lines + 10 and 0 < naive.helper_lines < naive.total


NEIGHBOUR = '''import triton
import triton.language as tl

SCALE = tl.constexpr(2.0)


@triton.jit
def scaled(x):
    return SCALE * x


def unused_here():
    return 0
'''

USES_NEIGHBOUR = '''import triton
from neighbour import scaled as times_scale


@triton.jit
def k(p):
    return times_scale(p)


@triton.jit
def k_alone(p):
    return p


@variant("v")
def v(p):
    return k[(1,)](p)


@variant("w")
def w(p):
    return k_alone[(1,)](p)
'''


def test_a_triton_row_counts_what_it_imports_from_a_neighbour(tmp_path):
    (tmp_path / "neighbour.py").write_text(NEIGHBOUR)
    path = tmp_path / "rows.py"
    path.write_text(USES_NEIGHBOUR)
    v = count.count_triton(path, "v", "triton:v")
    # own: k (3) | v (3); neighbour.py: scaled (3) + SCALE (1), kernel code since k calls it
    assert (v.kernel, v.host, v.helper_lines) == (3 + 4, 3, 4)
    assert v.helpers == ["neighbour.py:SCALE", "neighbour.py:scaled"]
    w = count.count_triton(path, "w", "triton:w")
    assert (w.kernel, w.host, w.helpers) == (3, 3, [])


def test_planted_triton_rows_count_the_shared_gelu_math():
    planted = Path(__file__).parent / "planted" / "planted_oob_triton.py"
    variant = discover.python_variants(planted)[0]
    lc = count.count_triton(planted, variant, f"triton:{variant}")
    assert "gelu_math.py:gelu_fp32" in lc.helpers and lc.helper_lines >= 4


def test_the_report_lists_the_shared_helpers_a_count_includes():
    from compare import discover, report
    from compare.results import OpResult

    result = OpResult("gelu", "", "memory", {})
    result.loc = [count.count_cuda(discover.cuda_source("gelu"), v, f"cuda:{v}") for v in ("naive", "vec")]
    rows = {row[0]: row for row in report.loc_table(result)}
    helpers = rows["cuda:vec"][report.LOC_HEADERS.index("of which shared helpers")]
    assert helpers.startswith(f"{result.loc[1].helper_lines} (") and "lab_device.cuh:" in helpers
    assert "load_packet" in helpers and "load_packet" not in rows["cuda:naive"][4]
