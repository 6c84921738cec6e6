"""compare.callgraph: what a row reaches from its entry point, across the lab's headers and neighbouring modules;
and the build key, which covers the same headers."""
import shutil

import pytest

from compare import build, callgraph, env


def test_reach_follows_references_and_marks_what_a_kernel_reaches_as_kernel():
    entities = {
        "entry": callgraph.Entity("entry", [(1, 2)], {"launch", "log"}, False),
        "launch": callgraph.Entity("launch", [(3, 4)], {"k"}, False),
        "k": callgraph.Entity("k", [(5, 6)], {"helper"}, True),
        "helper": callgraph.Entity("helper", [(7, 7)], set(), False),
        "log": callgraph.Entity("log", [(8, 8)], {"helper"}, False),
        "unused": callgraph.Entity("unused", [(9, 9)], set(), True),
    }
    kernel, host = callgraph.reach(entities, ["entry"])
    assert kernel == {"k", "helper"}  # helper is reached from the host too; reached from a kernel, it is kernel code
    assert host == {"entry", "launch", "log"}


def test_a_kernels_local_variable_named_like_a_host_function_does_not_reach_it(tmp_path):
    """A name a function binds (a parameter, an assignment) is the function's own: a kernel's local `behind`
    leaves the row function `behind` host code, while a name it only reads still leads to the module's."""
    path = tmp_path / "demo.py"
    path.write_text(
        "import triton\n"
        "from compare.spec import variant\n\n"
        "@triton.jit\n"
        "def demo_kernel(x, n):\n"
        "    behind = x + 1\n"
        "    scale = helper(behind)\n"
        "    return scale\n\n"
        "@triton.jit\n"
        "def helper(y):\n"
        "    return y\n\n"
        "@variant(\"behind\")\n"
        "def behind(x):\n"
        "    global counter\n"
        "    counter = 1\n"
        "    return demo_kernel(x, 1)\n\n"
        "counter = 0\n")
    reached = callgraph.triton_reach(path, "behind")
    assert sorted(e.name for e in reached.kernel) == ["demo_kernel", "helper"]
    assert sorted(e.name for e in reached.host) == ["behind", "counter"]


def test_included_headers_are_the_labs_own_found_beside_the_file_or_in_the_include_dirs(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "base.h").write_text("#pragma once\n")
    (shared / "angle.h").write_text("#pragma once\n")
    (shared / "device.cuh").write_text('#include "base.h"  // found in the include dir\n#include <cuda_fp16.h>\n')
    (tmp_path / "local.cuh").write_text('#include "device.cuh"\n#include "local.cuh"\n')
    (tmp_path / "op.cu").write_text(
        '#include "local.cuh"\n'
        "// #include \"commented.h\"\n"
        "/* #include \"also_commented.h\"\n*/\n"
        "#include <angle.h>\n"
        "#include <type_traits>\n"
        '  #  include "device.cuh"\n')
    (tmp_path / "commented.h").write_text("")
    (tmp_path / "also_commented.h").write_text("")
    found = callgraph.included_headers(tmp_path / "op.cu", [shared])
    assert [p.name for p in found] == ["local.cuh", "device.cuh", "base.h", "angle.h"]
    assert found[1] == (shared / "device.cuh").resolve()


def test_the_labs_ops_include_the_shared_headers():
    names = [p.name for p in callgraph.included_headers(env.CUDA_DIR / "gelu.cu")]
    assert sorted(names) == ["lab.h", "lab_device.cuh", "lab_torch.h"]


def test_a_continued_macro_is_one_entity_and_the_function_after_it_keeps_its_name():
    text = (
        "#define ASM_OP(T) \\\n"
        "  asm volatile(\"op.\" T \";\" \\\n"
        "               : \"+f\"(d[0]))\n"
        "\n"
        "template <typename T>\n"
        "__device__ void op(float (&d)[1]) { ASM_OP(\"f32\"); }\n"
        "template <> __device__ float convert<float>(float v) { return v; }\n")
    entities, _ = callgraph.c_entities(text)
    assert set(entities) == {"ASM_OP", "op", "convert"}
    assert entities["ASM_OP"].spans == [(1, 3)] and entities["op"].spans == [(5, 6)]
    assert "ASM_OP" in entities["op"].refs


def test_cuda_kernel_names_include_the_device_helpers_of_the_shared_headers():
    names = callgraph.cuda_kernel_names(env.CUDA_DIR / "gelu.cu", "vec")
    assert {"gelu_vec_kernel", "load_packet", "store_packet", "to_float", "from_float"} <= set(names)
    assert "unary_elementwise" not in names  # host code of lab_torch.h


def test_matmul_wgmma_reaches_its_wgmma_helper_behind_a_macro():
    names = callgraph.cuda_kernel_names(env.CUDA_DIR / "matmul.cu", "wgmma")
    assert {"matmul_wgmma_kernel", "wgmma_m64n256k16", "LAB_WGMMA_M64N256K16"} <= set(names)
    assert "volatile" not in names


def test_neighbour_imports_in_every_form(tmp_path):
    (tmp_path / "maths.py").write_text(
        "import triton\n"
        "from deeper import base\n"
        "@triton.jit\n"
        "def a(x):\n    return base(x)\n"
        "@triton.jit\n"
        "def b(x):\n    return x\n"
        "@triton.jit\n"
        "def never(x):\n    return x\n")
    (tmp_path / "deeper.py").write_text("import triton\n@triton.jit\ndef base(x):\n    return x\n")
    (tmp_path / "rows.py").write_text(
        "import triton\n"
        "import maths\n"
        "from maths import a as alias\n"
        "from compare.validate import check_inputs\n"
        "@triton.jit\n"
        "def k(p):\n    return alias(p) + maths.b(p)\n"
        "@variant('v')\n"
        "def v(p):\n    check_inputs('x', p)\n    return k[(1,)](p)\n")
    reached = callgraph.triton_reach(tmp_path / "rows.py", "v")
    assert reached.helpers() == ["deeper.py:base", "maths.py:a", "maths.py:b"]  # not compare.validate: the harness
    assert callgraph.triton_kernel_names(tmp_path / "rows.py", "v") == ["a", "b", "base", "k"]


def _copy_op(tmp_path, monkeypatch):
    for name in ("gelu.cu", *build.SHARED_HEADERS):
        shutil.copy(env.CUDA_DIR / name, tmp_path / name)
    monkeypatch.setattr(env, "CUDA_DIR", tmp_path)
    monkeypatch.setattr(env, "nvcc_version", lambda: "12.8")  # the key without running nvcc
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0a")


def test_the_build_key_covers_every_header_the_cu_includes(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    _copy_op(tmp_path, monkeypatch)
    (tmp_path / "gelu_math.cuh").write_text("#pragma once\n#include \"gelu_tanh.cuh\"\n")
    (tmp_path / "gelu_tanh.cuh").write_text("#pragma once\n")
    gelu = tmp_path / "gelu.cu"
    gelu.write_text('#include "gelu_math.cuh"\n' + gelu.read_text())
    key = build.build_key("gelu", [])
    (tmp_path / "gelu_tanh.cuh").write_text("#pragma once\n__device__ float t(float x);\n")  # through gelu_math.cuh
    assert build.build_key("gelu", []) != key
    key = build.build_key("gelu", [])
    (tmp_path / "lab_device.cuh").write_text((tmp_path / "lab_device.cuh").read_text() + "\n")
    assert build.build_key("gelu", []) != key


def test_the_build_key_ignores_a_header_the_cu_does_not_include(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    _copy_op(tmp_path, monkeypatch)
    (tmp_path / "other.cuh").write_text("#pragma once\n")
    key = build.build_key("gelu", [])
    (tmp_path / "other.cuh").write_text("#pragma once\nint x;\n")
    assert build.build_key("gelu", []) == key
