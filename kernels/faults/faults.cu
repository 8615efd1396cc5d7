// SPDX-License-Identifier: Apache-2.0
// Deliberately broken vector_add kernels (and one correct one) for the harness's own GPU tests:
// each entry has exactly the ABI of kernels/cuda_cpp/vector_add.cu's vector_add_f32
//   (const float* x, const float* y, float* out, long long n)   out[i] = x[i] + y[i], float32
// and the same launch shape (block = 256 threads, grid = cdiv(n, 1024), 4 elements per thread,
// shared 0), but each is wrong in exactly one way. docs/faults.md lists the verdict the harness is
// expected to give for each. The dynamic-parallelism fault (extra_stream_work) needs relocatable
// device code and libcudadevrt, so it lives in extra_stream_work.cu.
// Compiled with NVRTC 13.0 (whole program, -default-device) by kernels/faults/export.py.

namespace {

constexpr int kBlock = 256;
constexpr int kPerThread = 4;

// The first element this thread owns (4 consecutive elements per thread).
__device__ __forceinline__ long long first_element() {
  return (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * kPerThread;
}

// The correct body of vector_add_f32: float4 when all 4 elements are in range (16-byte aligned
// bases assumed, as the harness's allocations are), scalar tail.
__device__ __forceinline__ void add4(const float* __restrict__ x, const float* __restrict__ y,
                                     float* __restrict__ out, long long n, long long i) {
  if (i + 3 < n) {
    const float4 a = *reinterpret_cast<const float4*>(x + i);
    const float4 b = *reinterpret_cast<const float4*>(y + i);
    *reinterpret_cast<float4*>(out + i) = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  } else {
    for (long long j = i; j < n; ++j) out[j] = x[j] + y[j];
  }
}

}  // namespace

// Never written by any kernel or by the harness: endless_loop spins until it becomes non-zero.
// volatile (and an external symbol, so it could in principle be set through cuModuleGetGlobal):
// the compiler must re-read it on every iteration and cannot delete the loop.
extern "C" __device__ volatile int portbench_fault_release = 0;

// stale_result: number of blocks that have finished computing. Zero in a freshly loaded module;
// equal to the grid size once the first launch has completed, after which every block returns
// at once. During the first launch it stays below gridDim.x until the last block is done, so all
// blocks of the first launch compute.
extern "C" __device__ unsigned long long portbench_fault_stale_blocks_done = 0;

// ---- correct ---------------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(kBlock)
vector_add_correct(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                   long long n) {
  add4(x, y, out, n, first_element());
}

// ---- illegal_address: every store lands 4 TiB past `out` -> CUDA_ERROR_ILLEGAL_ADDRESS -------
extern "C" __global__ void __launch_bounds__(kBlock)
vector_add_illegal_address(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ out, long long n) {
  constexpr unsigned long long kFar = 1ull << 40;   // elements: 4 TiB beyond any allocation
  const long long i = first_element();
  for (long long j = i; j < i + kPerThread && j < n; ++j) {
    out[j + kFar] = x[j] + y[j];
  }
}

// ---- trap: computes its part correctly, then one block executes __trap() ---------------------
extern "C" __global__ void __launch_bounds__(kBlock)
vector_add_trap(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                long long n) {
  add4(x, y, out, n, first_element());
  if (blockIdx.x == gridDim.x / 2 && threadIdx.x == 0) {
    __trap();
  }
}

// ---- endless_loop: spins on a flag nobody sets -> never terminates ---------------------------
extern "C" __global__ void __launch_bounds__(kBlock)
vector_add_endless_loop(const float* __restrict__ x, const float* __restrict__ y,
                        float* __restrict__ out, long long n) {
  add4(x, y, out, n, first_element());
  while (portbench_fault_release == 0) {
    __nanosleep(1000);
  }
}

// ---- writes_nothing: returns at once; out keeps whatever it held -----------------------------
extern "C" __global__ void __launch_bounds__(kBlock)
vector_add_writes_nothing(const float* __restrict__ x, const float* __restrict__ y,
                          float* __restrict__ out, long long n) {
}

// ---- writes_part: only the first half of out (indices < n / 2) is written ---------------------
extern "C" __global__ void __launch_bounds__(kBlock)
vector_add_writes_part(const float* __restrict__ x, const float* __restrict__ y,
                       float* __restrict__ out, long long n) {
  const long long half = n / 2;
  const long long i = first_element();
  for (long long j = i; j < i + kPerThread && j < half; ++j) {
    out[j] = x[j] + y[j];
  }
}

// ---- stale_result: correct on the first launch of the loaded module, later launches return --
extern "C" __global__ void __launch_bounds__(kBlock)
vector_add_stale_result(const float* __restrict__ x, const float* __restrict__ y,
                        float* __restrict__ out, long long n) {
  volatile unsigned long long* done = &portbench_fault_stale_blocks_done;
  if (*done >= gridDim.x) {
    return;   // "the previous result is still there": nothing is computed or written
  }
  add4(x, y, out, n, first_element());
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(&portbench_fault_stale_blocks_done, 1ull);
  }
}

// ---- writes_nan: NaN at every index divisible by 1000, correct values elsewhere --------------
extern "C" __global__ void __launch_bounds__(kBlock)
vector_add_writes_nan(const float* __restrict__ x, const float* __restrict__ y,
                      float* __restrict__ out, long long n) {
  const long long i = first_element();
  const float nan = __int_as_float(0x7fc00000);   // quiet NaN
  for (long long j = i; j < i + kPerThread && j < n; ++j) {
    out[j] = (j % 1000 == 0) ? nan : x[j] + y[j];
  }
}
