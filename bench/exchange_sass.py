"""What a row costs the norms' exchange kernels in machine code, counted without a GPU.

    python bench/exchange_sass.py --dtype bf16 fp32

The exchange steps (triton_src/layernorm.py: the backward's v10 exchange, v11 exchange_ahead, v12 lean_exchange,
v13 lean_ahead, the forward's v14 exchange_forward, and RMSNorm's v9-v13) run one loop turn per row of their group.
This compiles each step's kernel with the installed Triton for sm_90 (no GPU needed: triton.compile on the kernel's
source, with the launch parameters the step uses for rows of --parts parts and the 16-byte alignment and
divisibility a real launch at the bench shapes has), has ptxas say its registers and spills, disassembles it
(nvdisasm, shipped with Triton) and counts the instructions of the row loop's body, apart from the loop that waits
for the partners' sums (taken only when a part is not yet published): in all, and the kinds that carry each row's
fixed work (shuffles and barriers of the reductions across the program, shared-memory rounds, local-memory spills,
the compares and selects of the 64-bit flags).

Static counts of one Triton version's code, not of the GPU image's (Triton 3.6 there) nor a timing: a guide to what
a step changes, to be measured by `python -m compare`.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)  # a compiled kernel, not the interpreter's
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from triton_src import layernorm, rmsnorm  # noqa: E402

KINDS = ("SHFL", "BAR", "STS", "LDS", "STL", "LDL", "ISETP", "SEL", "LDG", "STG", "ATOMG")
TOOLS = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
# The steps as each norm's backward launches its kernel: exchange_meta's arguments but the parts, the choices that
# depend on the dtype taken from the rules the steps use (layernorm.exchange_rows_ahead, lean_ahead_meta), not
# written again here.
STEP_LAUNCH = {"exchange": lambda x: dict(ahead=1, lean=False),
               "exchange_ahead": lambda x: dict(ahead=layernorm.exchange_rows_ahead(x), lean=False),
               "lean_exchange": lambda x: dict(ahead=1, lean=True),
               "lean_ahead": layernorm.lean_ahead_meta}
KERNELS = {"layernorm": layernorm.layernorm_exchange_backward_kernel,
           "rmsnorm": rmsnorm.rmsnorm_exchange_backward_kernel}
# The forward's exchange step (layernorm.py's v14, RMSNorm's v13), launched as exchange_forward_meta says.
FORWARD_KERNELS = {"layernorm": layernorm.layernorm_exchange_forward_kernel,
                   "rmsnorm": rmsnorm.rmsnorm_exchange_forward_kernel}
TORCH_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def signature(kernel, dtype: str) -> dict[str, str]:
    """The kernel's parameters' types at a launch on `dtype` rows: x, dy, w, b, dx and y in it, statistics and
    partial rows fp32, the slots 64-bit words, eps fp32, integers 32-bit, the rest constexpr."""
    types = {"slots_ptr": "*i64", "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "dw_part_ptr": "*fp32",
             "db_part_ptr": "*fp32", "eps": "fp32"}
    sig = {}
    for name in kernel.arg_names:
        if name.isupper():
            sig[name] = "constexpr"
        elif name in types or name.endswith("_ptr"):
            sig[name] = types.get(name, f"*{dtype}")
        else:
            sig[name] = "i32"
    return sig


def compiled_for_hopper(kernel, dtype: str, meta: dict):
    """(the kernel compiled for sm_90 as launched with `meta`, exchange_meta's or exchange_forward_meta's, on
    `dtype` rows; its register cap)."""
    meta = dict(meta)
    options = {"num_warps": meta.pop("num_warps"), "maxnreg": meta.pop("maxnreg")}
    meta.pop("launch_cooperative_grid")
    sig = signature(kernel, dtype)
    # pointers 16-byte aligned and M, N multiples of 16, as at the bench shapes: Triton specializes on both
    aligned = [i for i, (name, kind) in enumerate(sig.items()) if kind.startswith("*") or name in ("m", "n")]
    source = ASTSource(kernel, sig, constexprs=meta, attrs={(i,): [["tt.divisibility", 16]] for i in aligned})
    return triton.compile(source, target=GPUTarget("cuda", 90, 32), options=options), options["maxnreg"]


def compile_step(kernel, dtype: str, meta: dict, out: Path) -> tuple[str, Path]:
    """(ptxas -v's report, the cubin) of the kernel launched with `meta` (compiled_for_hopper)."""
    compiled, maxnreg = compiled_for_hopper(kernel, dtype, meta)
    ptx, cubin = out.with_suffix(".ptx"), out.with_suffix(".cubin")
    ptx.write_text(compiled.asm["ptx"])
    cubin.write_bytes(compiled.asm["cubin"])
    report = subprocess.run([str(TOOLS / "ptxas"), "-v", "--gpu-name", "sm_90a", "-maxrregcount",
                             str(maxnreg), str(ptx), "-o", str(out.with_suffix(".check.cubin"))],
                            capture_output=True, text=True, check=True).stderr
    return report, cubin


def carried_tensors(kernel, dtype: str, meta: dict) -> int:
    """Tensors of `dtype` that the kernel's row loop carries from one turn to the next in Triton's IR (the results
    of its scf.for over `row`), compiled as compile_step compiles it."""
    ir = compiled_for_hopper(kernel, dtype, meta)[0].asm["ttir"]
    loops = [line for line in ir.splitlines() if "scf.for %row" in line]
    if len(loops) != 1:
        raise SystemExit(f"{kernel.__name__}: {len(loops)} loops over rows in its IR, not one")
    return loops[0].split("->")[1].count(f"x{dtype}>")


def row_loop(cubin: Path) -> tuple[list[str], int]:
    """(the row loop's instructions less the inner loops', the inner loops' count) of a one-kernel cubin: the
    longest backward branch's body is the row loop, the backward branches inside it the waits."""
    text = subprocess.run([str(TOOLS / "nvdisasm"), "-c", str(cubin)], capture_output=True, text=True,
                          check=True).stdout
    instructions, labels = [], {}
    for line in text.splitlines():
        label = re.match(r"^\s*\.(L_x_\d+):", line)
        if label:
            labels[label.group(1)] = len(instructions)
        found = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if found:
            instructions.append(found.group(1))
    loops = []
    for i, instruction in enumerate(instructions):
        target = re.search(r"BRA.*?(L_x_\d+)", instruction)
        if target and labels.get(target.group(1), i) < i:
            loops.append((labels[target.group(1)], i))
    if not loops:
        raise SystemExit(f"{cubin}: no loop found in its code")
    outer = max(loops, key=lambda loop: loop[1] - loop[0])
    inner = [loop for loop in loops if loop != outer and outer[0] <= loop[0] and loop[1] <= outer[1]]
    body = set(range(outer[0], outer[1] + 1))
    for start, end in inner:
        body -= set(range(start, end + 1))
    return [instructions[i] for i in sorted(body)], len(inner)


def opcode(instruction: str) -> str:
    return re.sub(r"^@!?U?P\w+\s+", "", instruction).split()[0].split(".")[0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", nargs="+", default=["bf16", "fp32"], choices=["fp32", "fp16", "bf16"])
    p.add_argument("--parts", type=int, default=8, help="programs a row (8: rows of 16K at 2048 columns a part)")
    opts = p.parse_args(argv)
    print(f"triton {triton.__version__}, sm_90, rows of {opts.parts} parts; the row loop's body, the waits apart")
    header = f"{'norm':10} {'step':16} {'dtype':5} {'registers and spills (ptxas -v)':58} {'a row':>5}"
    print(header + "".join(f" {kind:>5}" for kind in KINDS))
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in opts.dtype:
            steps = [(norm, step, kernel, layernorm.exchange_meta(opts.parts,
                                                                  **launch(torch.empty(0, dtype=TORCH_DTYPES[dtype]))))
                     for norm, kernel in KERNELS.items() for step, launch in STEP_LAUNCH.items()]
            steps += [(norm, "exchange_forward", kernel, layernorm.exchange_forward_meta(opts.parts))
                      for norm, kernel in FORWARD_KERNELS.items()]
            for norm, step, kernel, meta in steps:
                report, cubin = compile_step(kernel, dtype, meta, Path(tmp) / f"{norm}-{step}")
                used = re.search(r"Used (\d+) registers", report).group(1)
                spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)
                body, _ = row_loop(cubin)
                counts = collections.Counter(opcode(i) for i in body)
                where = f"{used} registers, spills {spills.group(1)} B stored / {spills.group(2)} B loaded"
                print(f"{norm:10} {step:16} {dtype:5} {where:58} {len(body):5}"
                      + "".join(f" {counts.get(kind, 0):5}" for kind in KINDS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
