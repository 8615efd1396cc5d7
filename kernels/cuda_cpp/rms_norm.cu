// SPDX-License-Identifier: Apache-2.0
// rms_norm for CUDA C++: y[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * w.
//
// One block per row (grid = m), blockDim a multiple of 32 (at most 1024). Float32 accumulation;
// one rounding to the output dtype. Rows are contiguous (inner stride 1); row strides are
// arguments, in elements. When n and the row starts allow it, rows move in 16-byte vectors,
// otherwise element by element, so any n works. Entries (extern "C", one per dtype):
//   rms_norm_<f16|bf16|f32>(const T* x, const T* w, T* y, int n, long long x_row_stride,
//                           long long y_row_stride, float eps)
// Compiled with NVRTC by portbench_export.cuda_cpp.
#include "portbench_device.cuh"

namespace {

using portbench::block_sum;
using portbench::from_f32;
using portbench::to_f32;

template <typename T>
__device__ __forceinline__ void rms_norm_row(const T* __restrict__ x, const T* __restrict__ w,
                                             T* __restrict__ y, int n, long long x_row_stride,
                                             long long y_row_stride, float eps) {
  constexpr int VEC = 16 / sizeof(T);
  const long long row = blockIdx.x;
  const T* xr = x + row * x_row_stride;
  T* yr = y + row * y_row_stride;
  const bool vec = n % VEC == 0 &&
      ((reinterpret_cast<unsigned long long>(xr) | reinterpret_cast<unsigned long long>(yr) |
        reinterpret_cast<unsigned long long>(w)) & 15ull) == 0;

  float ss = 0.f;
  if (vec) {
    for (int i = threadIdx.x * VEC; i < n; i += blockDim.x * VEC) {
      const uint4 raw = *reinterpret_cast<const uint4*>(xr + i);
      const T* v = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const float f = to_f32(v[k]);
        ss += f * f;
      }
    }
  } else {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const float f = to_f32(xr[i]);
      ss += f * f;
    }
  }
  const float rstd = rsqrtf(block_sum(ss) / static_cast<float>(n) + eps);

  if (vec) {
    for (int i = threadIdx.x * VEC; i < n; i += blockDim.x * VEC) {
      const uint4 rx = *reinterpret_cast<const uint4*>(xr + i);
      const uint4 rw = *reinterpret_cast<const uint4*>(w + i);
      const T* vx = reinterpret_cast<const T*>(&rx);
      const T* vw = reinterpret_cast<const T*>(&rw);
      uint4 ro;
      T* vo = reinterpret_cast<T*>(&ro);
#pragma unroll
      for (int k = 0; k < VEC; ++k) vo[k] = from_f32<T>(to_f32(vx[k]) * rstd * to_f32(vw[k]));
      *reinterpret_cast<uint4*>(yr + i) = ro;
    }
  } else {
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      yr[i] = from_f32<T>(to_f32(xr[i]) * rstd * to_f32(w[i]));
  }
}

}  // namespace

#define PORTBENCH_RMS_NORM_ENTRY(NAME, T)                                                      \
  extern "C" __global__ void __launch_bounds__(1024)                                           \
  NAME(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int n,             \
       long long x_row_stride, long long y_row_stride, float eps) {                            \
    rms_norm_row<T>(x, w, y, n, x_row_stride, y_row_stride, eps);                              \
  }

PORTBENCH_RMS_NORM_ENTRY(rms_norm_f16, __half)
PORTBENCH_RMS_NORM_ENTRY(rms_norm_bf16, __nv_bfloat16)
PORTBENCH_RMS_NORM_ENTRY(rms_norm_f32, float)
