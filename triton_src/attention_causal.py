"""Fused attention forward in Triton, causal (key j masked out of query i's row for j > i). Spec:
specs/attention_causal.py. CUDA side: cuda_src/attention_causal.cu. The kernels are triton_src/attention.py's, run
with CAUSAL set: what the mask changes is there, beside the code it changes.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/attention_causal.md):
  v1 basic    attention's v1 with the mask: every tile masked, tiles past the block's last query skipped
  v2 tuned    attention's v2: unmasked tiles left of the diagonal, masked tiles on it, longest query blocks first
  v3 tma      attention's v3: v2's loops with the tiles moved by the TMA unit
"""
import torch

from compare.spec import variant
from triton_src.attention import run_basic, run_tma, run_tuned

NAME = "attention_causal"


@variant("basic")
def basic(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return run_basic(NAME, q, k, v, causal=True)


@variant("tuned")
def tuned(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return run_tuned(NAME, q, k, v, causal=True)


@variant("tma")
def tma(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return run_tma(NAME, q, k, v, causal=True)
