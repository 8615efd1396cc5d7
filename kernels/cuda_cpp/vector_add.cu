// SPDX-License-Identifier: Apache-2.0
// vector_add for CUDA C++: out = x + y over float32 arrays of n elements.
//
// Each thread adds 4 consecutive elements: one float4 load/store per input/output when all 4
// are in range (bases must be 16-byte aligned, as the harness's allocations are), scalar for the
// tail of n. Launch: block = 256 threads, grid = cdiv(n, 1024); static and dynamic shared 0.
// Compiled with NVRTC by portbench_export.cuda_cpp.

extern "C" __global__ void __launch_bounds__(256)
vector_add_f32(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
               long long n) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (i + 3 < n) {
    const float4 a = *reinterpret_cast<const float4*>(x + i);
    const float4 b = *reinterpret_cast<const float4*>(y + i);
    *reinterpret_cast<float4*>(out + i) = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  } else {
    for (long long j = i; j < n; ++j) out[j] = x[j] + y[j];
  }
}
