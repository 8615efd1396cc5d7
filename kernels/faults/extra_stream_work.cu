// SPDX-License-Identifier: Apache-2.0
// extra_stream_work: a vector_add that computes the right result but also launches work of its
// own from the device (CUDA dynamic parallelism), outside the launch plan of its manifest: block 0
// launches a busy child grid into the fire-and-forget stream on every launch and stays resident
// until the child has started, so the child overlaps the parent's own execution. The harness must
// notice a kernel it never launched (FOREIGN_KERNEL); see docs/faults.md.
//
// ABI and launch shape as kernels/cuda_cpp/vector_add.cu's vector_add_f32:
//   (const float* x, const float* y, float* out, long long n), block 256, grid cdiv(n, 1024).
// Relocatable device code: kernels/faults/export.py compiles this with NVRTC 13.0
// (-rdc=true, sm_90) and links the relocatable cubin with libcudadevrt.a through nvJitLink 13.0.

namespace {

constexpr int kBlock = 256;
constexpr int kPerThread = 4;
constexpr unsigned long long kChildSpinNs = 20000;      // the child spins 20 us
constexpr unsigned long long kMaxWaitNs = 2000000;      // the parent waits at most 2 ms for it

}  // namespace

// Device-side launches of the child that have started (monotonic; never reset). The parent
// waits until its child has started, so the child always runs inside the parent's execution
// window: a harness that looks for foreign kernels overlapping a sample must see it.
extern "C" __device__ unsigned int portbench_fault_child_starts = 0;

// Written by the child only when its spin ends at an impossible timer value, so the store is
// never executed but the compiler cannot prove that and drop the loop.
extern "C" __device__ unsigned long long portbench_fault_child_sink = 0;

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The foreign kernel: one block of 32 threads that announces its start and then spins for
// `spin_ns` nanoseconds; it touches none of the operator's tensors.
extern "C" __global__ void extra_stream_work_child(unsigned long long spin_ns) {
  const unsigned long long start = global_timer_ns();
  if (threadIdx.x == 0) {
    atomicAdd(&portbench_fault_child_starts, 1u);
  }
  unsigned long long now = start;
  while (now - start < spin_ns) {
    now = global_timer_ns();
  }
  if (now == ~0ull) {
    portbench_fault_child_sink = now;
  }
}

extern "C" __global__ void __launch_bounds__(kBlock)
vector_add_extra_stream_work(const float* __restrict__ x, const float* __restrict__ y,
                             float* __restrict__ out, long long n) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * kPerThread;
  if (i + 3 < n) {
    const float4 a = *reinterpret_cast<const float4*>(x + i);
    const float4 b = *reinterpret_cast<const float4*>(y + i);
    *reinterpret_cast<float4*>(out + i) = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  } else {
    for (long long j = i; j < n; ++j) out[j] = x[j] + y[j];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    volatile unsigned int* starts = &portbench_fault_child_starts;
    const unsigned int before = *starts;
    // Device-side launch (cudaGetParameterBufferV2 + cudaLaunchDeviceV2 from libcudadevrt) into
    // the per-grid fire-and-forget stream: not ordered with anything the harness launched.
    extra_stream_work_child<<<1, 32, 0, cudaStreamFireAndForget>>>(kChildSpinNs);
    // Stay resident until the child has started (at most kMaxWaitNs, so a child that cannot
    // start turns this into a slow launch, never a hang).
    const unsigned long long t0 = global_timer_ns();
    while (*starts == before && global_timer_ns() - t0 < kMaxWaitNs) {
      __nanosleep(200);
    }
  }
}
