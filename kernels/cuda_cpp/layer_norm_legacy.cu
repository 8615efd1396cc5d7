// SPDX-License-Identifier: Apache-2.0
// layer_norm_legacy for CUDA C++ (reference/src/ops/layer_norm.cpp):
// y = (x - mean) * rsqrt(var + eps) * (w + weight_shift) + b over each row of x[m, n], biased
// variance, fp32 math, one rounding to the output dtype. The persistent_layer_norm entries also
// write mean[m] and rstd[m] (fp32).
//
// One block per row (grid = m). The row stays in registers: thread t holds the packs t,
// t + blockDim.x, ... (VPT of them, a compile-time count the exporter picks so that
// VPT * blockDim.x packs cover the row), so x is read from memory once, the mean and the centred
// variance are two block sums over registers, and y is written once. A pack is a 16-byte vector
// (`_v` entries: n a multiple of the vector width, 16-byte aligned rows; the exporter checks n,
// the harness aligns bases) or one element (`_s` entries: any n up to 8 * blockDim.x).
// Entries (extern "C"), P in {v, s}:
//   layer_norm_<f16|bf16|f32>_<P><VPT>(const T* x, const T* w, const T* b, T* y, int n,
//       long long x_row_stride, long long y_row_stride, float eps, float weight_shift)
//   persistent_layer_norm_<f16|bf16|f32>_<P><VPT>(x, w, b, y, float* mean, float* rstd, n,
//       x_row_stride, y_row_stride, eps, weight_shift)
// Compiled with NVRTC by portbench_export.cuda_cpp.
#include "portbench_device.cuh"

namespace {

using portbench::block_sum;
using portbench::from_f32;
using portbench::to_f32;

template <typename T, int LANES> struct alignas(sizeof(T) * LANES) Pack {
  static constexpr int kLanes = LANES;
  T v[LANES];
};

template <typename T, int LANES, int VPT>
__device__ __forceinline__ void layer_norm_row(const T* __restrict__ x, const T* __restrict__ w,
                                               const T* __restrict__ b, T* __restrict__ y,
                                               float* __restrict__ mean_out, float* __restrict__ rstd_out,
                                               int n, long long x_row_stride, long long y_row_stride,
                                               float eps, float shift) {
  using V = Pack<T, LANES>;
  constexpr int L = V::kLanes;
  const long long row = blockIdx.x;
  const V* xr = reinterpret_cast<const V*>(x + row * x_row_stride);
  V* yr = reinterpret_cast<V*>(y + row * y_row_stride);
  const int vectors = n / L;

  V held[VPT];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int i = threadIdx.x + k * blockDim.x;
    if (i < vectors) {
      held[k] = xr[i];
#pragma unroll
      for (int e = 0; e < L; ++e) sum += to_f32(held[k].v[e]);
    }
  }
  const float mean = block_sum(sum) / static_cast<float>(n);

  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    if (threadIdx.x + k * blockDim.x < vectors) {
#pragma unroll
      for (int e = 0; e < L; ++e) {
        const float d = to_f32(held[k].v[e]) - mean;
        sq += d * d;
      }
    }
  }
  const float rstd = rsqrtf(block_sum(sq) / static_cast<float>(n) + eps);

  const V* wv = reinterpret_cast<const V*>(w);
  const V* bv = reinterpret_cast<const V*>(b);
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int i = threadIdx.x + k * blockDim.x;
    if (i < vectors) {
      const V wk = wv[i], bk = bv[i];
      V out;
#pragma unroll
      for (int e = 0; e < L; ++e)
        out.v[e] = from_f32<T>((to_f32(held[k].v[e]) - mean) * rstd * (to_f32(wk.v[e]) + shift) +
                               to_f32(bk.v[e]));
      yr[i] = out;
    }
  }
  if (mean_out != nullptr && threadIdx.x == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
}

}  // namespace

#define PORTBENCH_LAYER_NORM_ENTRIES(SUFFIX, T, P, LANES, VPT)                                    \
  extern "C" __global__ void __launch_bounds__(512)                                               \
  layer_norm_##SUFFIX##_##P##VPT(const T* __restrict__ x, const T* __restrict__ w,                \
                                 const T* __restrict__ b, T* __restrict__ y, int n,               \
                                 long long x_row_stride, long long y_row_stride, float eps,       \
                                 float shift) {                                                   \
    layer_norm_row<T, LANES, VPT>(x, w, b, y, nullptr, nullptr, n, x_row_stride, y_row_stride,    \
                                  eps, shift);                                                    \
  }                                                                                               \
  extern "C" __global__ void __launch_bounds__(512)                                               \
  persistent_layer_norm_##SUFFIX##_##P##VPT(const T* __restrict__ x, const T* __restrict__ w,     \
                                            const T* __restrict__ b, T* __restrict__ y,           \
                                            float* __restrict__ mean, float* __restrict__ rstd,   \
                                            int n, long long x_row_stride,                        \
                                            long long y_row_stride, float eps, float shift) {     \
    layer_norm_row<T, LANES, VPT>(x, w, b, y, mean, rstd, n, x_row_stride, y_row_stride, eps,     \
                                  shift);                                                         \
  }

// Each dtype with 16-byte vectors (v) and single elements (s) as packs.
#define PORTBENCH_LAYER_NORM_DTYPES(VPT)                                      \
  PORTBENCH_LAYER_NORM_ENTRIES(f16, __half, v, 8, VPT)                        \
  PORTBENCH_LAYER_NORM_ENTRIES(bf16, __nv_bfloat16, v, 8, VPT)                \
  PORTBENCH_LAYER_NORM_ENTRIES(f32, float, v, 4, VPT)                         \
  PORTBENCH_LAYER_NORM_ENTRIES(f16, __half, s, 1, VPT)                        \
  PORTBENCH_LAYER_NORM_ENTRIES(bf16, __nv_bfloat16, s, 1, VPT)                \
  PORTBENCH_LAYER_NORM_ENTRIES(f32, float, s, 1, VPT)

PORTBENCH_LAYER_NORM_DTYPES(1)
PORTBENCH_LAYER_NORM_DTYPES(2)
PORTBENCH_LAYER_NORM_DTYPES(4)
PORTBENCH_LAYER_NORM_DTYPES(8)
