from pathlib import Path

from compare import count, discover

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
    assert count.triton_kernel_names(path, "v") == ["kernel"]


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
    stripped = count.strip_c_comments(text)
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
    assert count.cuda_kernel_names(path, "v") == ["tiled_kernel"]
    assert count.count_cuda(path, "v", "cuda:v").kernel == 4
