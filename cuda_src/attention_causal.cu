// Fused attention forward, causal: O = softmax(Q Kᵀ · D^-1/2 + M) V with M[i, j] = -inf for key j > query i, Q, K,
// V and O of shape (B, H, S, D) in float16 or bfloat16, D = 64 or 128, every sum in float32.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/attention_causal.md):
//   v1 naive    attention.cu's v1 with the mask on: each kernel stops at key i in row i, so the scores above the
//               diagonal are neither computed, nor exponentiated, nor multiplied by V
//   v2 flash2   attention.cu's v2 with the mask on: a block stops at the key tile holding its last query (the tiles
//               above the diagonal are never loaded), masks only the tile the diagonal crosses, and the blocks of a
//               head start with the latest queries, which have the most keys
//   v3 warp32   attention.cu's v3 with the mask on: as v2, with 128 queries a block the diagonal crosses its last
//               two key tiles (four at D = 128, where the tiles hold 32 keys)
//   v4 lazy     attention.cu's v4 with the mask on: as v3, the rescaling of O skipped on most tiles
//   v5 wgmma    attention.cu's v5 with the mask on: the same walk up to the diagonal (128 queries and 128 keys a
//               tile, so only a block's last tile is masked), latest queries first
//
// No kernel is written twice: this file compiles cuda_src/attention.cu (its kernels, launchers and the checks of
// run_attention) with its own registrations left out, and registers the same launchers with causal = true. Spec:
// specs/attention_causal.py. Triton side: triton_src/attention_causal.py.
#define LAB_ATTENTION_KERNELS_ONLY
#include "attention.cu"

#ifndef __CUDACC__  // host half: the torch binding

at::Tensor attention_causal_naive(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention_causal", true, "naive", launch_attention_naive, /*scores=*/true);
}
at::Tensor attention_causal_flash2(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention_causal", true, "flash2", launch_attention_flash2);
}
at::Tensor attention_causal_warp32(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention_causal", true, "warp32", launch_attention_warp32);
}
at::Tensor attention_causal_lazy(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention_causal", true, "lazy", launch_attention_lazy);
}
at::Tensor attention_causal_wgmma(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention_causal", true, "wgmma", launch_attention_wgmma);
}

TORCH_LIBRARY(lab_attention_causal, m) {
  m.def("naive(Tensor q, Tensor k, Tensor v) -> Tensor");
  m.def("flash2(Tensor q, Tensor k, Tensor v) -> Tensor");
  m.def("warp32(Tensor q, Tensor k, Tensor v) -> Tensor");
  m.def("lazy(Tensor q, Tensor k, Tensor v) -> Tensor");
  m.def("wgmma(Tensor q, Tensor k, Tensor v) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_attention_causal, CUDA, m) {
  m.impl("naive", &attention_causal_naive);
  m.impl("flash2", &attention_causal_flash2);
  m.impl("warp32", &attention_causal_warp32);
  m.impl("lazy", &attention_causal_lazy);
  m.impl("wgmma", &attention_causal_wgmma);
}

#endif
