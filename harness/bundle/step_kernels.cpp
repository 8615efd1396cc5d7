// SPDX-License-Identifier: Apache-2.0
#include "portbench/bundle/step_kernels.hpp"

#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "portbench/bundle/error.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/cuda/nvrtc.hpp"

namespace portbench::bundle {
namespace {

// The one kernel parameter, laid out identically on host and device (x86-64 and NVPTX give
// these naturally aligned members the same offsets; step_kernel_param_bytes() is checked
// against the compiled kernels' parameter tables by tests/unit/bundle/steps_test.cpp).
struct step_args {
  std::uint64_t src = 0, dst = 0;   ///< addresses of element [0, ..., 0]
  std::int64_t n = 0;               ///< elements
  std::int32_t rank = 1;
  std::int32_t narrow = 0;          ///< every index and offset below 2^31: 32-bit index math
  std::int64_t shape[k_max_view_rank]{};
  std::int64_t src_stride[k_max_view_rank]{};
  std::int64_t dst_stride[k_max_view_rank]{};
  std::uint32_t magic[k_max_view_rank]{};
  std::uint32_t shift[k_max_view_rank]{};
  std::uint64_t pattern = 0;        ///< fill: the element's bits
  std::int64_t reduce_n = 0;        ///< sum: extent of the summed axis
  std::int64_t reduce_stride = 0;   ///< sum: its stride in src
};
static_assert(sizeof(step_args) == 248);

constexpr const char* k_common = R"(
#define PB_MAX_RANK 6
struct portbench_step_args {
  unsigned long long src, dst;
  long long n;
  int rank, narrow;
  long long shape[PB_MAX_RANK], src_stride[PB_MAX_RANK], dst_stride[PB_MAX_RANK];
  unsigned int magic[PB_MAX_RANK], shift[PB_MAX_RANK];
  unsigned long long pattern;
  long long reduce_n, reduce_stride;
};

// Element offsets in src and dst of linear index i, row-major over shape. Narrow: indices and
// offsets below 2^31, and i / shape[k] is a multiply-high by a magic number (no division).
template <bool Narrow>
__device__ __forceinline__ void pb_offsets(const portbench_step_args& a, long long i, long long& so, long long& dof) {
  if (Narrow) {
    unsigned int r = (unsigned int)i, s = 0, d = 0;
#pragma unroll
    for (int k = PB_MAX_RANK - 1; k > 0; --k) {
      if (k < a.rank) {
        const unsigned int q = (__umulhi(r, a.magic[k]) + r) >> a.shift[k];
        const unsigned int c = r - q * (unsigned int)a.shape[k];
        s += c * (unsigned int)a.src_stride[k];
        d += c * (unsigned int)a.dst_stride[k];
        r = q;
      }
    }
    so = (long long)(s + r * (unsigned int)a.src_stride[0]);
    dof = (long long)(d + r * (unsigned int)a.dst_stride[0]);
  } else {
    unsigned long long r = (unsigned long long)i;
    long long s = 0, d = 0;
#pragma unroll
    for (int k = PB_MAX_RANK - 1; k > 0; --k) {
      if (k < a.rank) {
        const unsigned long long e = (unsigned long long)a.shape[k];
        const unsigned long long q = r / e;
        const long long c = (long long)(r - q * e);
        s += c * a.src_stride[k];
        d += c * a.dst_stride[k];
        r = q;
      }
    }
    so = s + (long long)r * a.src_stride[0];
    dof = d + (long long)r * a.dst_stride[0];
  }
}

// Conversions by the PTX cvt instructions: round to nearest even; narrow floats widen exactly.
__device__ __forceinline__ float pb_f16_to_f32(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ float pb_bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned int)h << 16); }
__device__ __forceinline__ unsigned short pb_f32_to_f16(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ unsigned short pb_f32_to_bf16(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
// From double: round to odd into fp32 (truncate, then set the last bit if anything was cut),
// then to nearest even: one correct rounding, as fp32 keeps more than two extra bits.
__device__ __forceinline__ float pb_f64_to_f32_odd(double d) {
  float f = __double2float_rz(d);
  if ((double)f != d) f = __uint_as_float(__float_as_uint(f) | 1u);
  return f;
}
__device__ __forceinline__ unsigned short pb_f64_to_f16(double d) { return pb_f32_to_f16(pb_f64_to_f32_odd(d)); }
__device__ __forceinline__ unsigned short pb_f64_to_bf16(double d) { return pb_f32_to_bf16(pb_f64_to_f32_odd(d)); }

template <typename S, typename D, typename C, bool Narrow>
__device__ __forceinline__ void pb_copy(const portbench_step_args& a) {
  const S* src = reinterpret_cast<const S*>(a.src);
  D* dst = reinterpret_cast<D*>(a.dst);
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
    long long so, dof;
    pb_offsets<Narrow>(a, i, so, dof);
    dst[dof] = C::cvt(src[so]);
  }
}

// One thread per dst element: acc = x_0, then acc += x_j in index order over the summed axis,
// each x_j widened to the accumulator A; one rounding to D at the end.
template <typename S, typename D, typename A, typename In, typename Out, bool Narrow>
__device__ __forceinline__ void pb_sum(const portbench_step_args& a) {
  const S* src = reinterpret_cast<const S*>(a.src);
  D* dst = reinterpret_cast<D*>(a.dst);
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
    long long so, dof;
    pb_offsets<Narrow>(a, i, so, dof);
    A acc = In::cvt(src[so]);
    for (long long j = 1; j < a.reduce_n; ++j) acc += In::cvt(src[so + j * a.reduce_stride]);
    dst[dof] = Out::cvt(acc);
  }
}

template <typename T, bool Narrow>
__device__ __forceinline__ void pb_fill(const portbench_step_args& a) {
  T* dst = reinterpret_cast<T*>(a.dst);
  const T v = (T)a.pattern;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
    long long so, dof;
    pb_offsets<Narrow>(a, i, so, dof);
    dst[dof] = v;
  }
}
)";

// Storage type of an element in the device source.
const char* storage(element_type t) {
  switch (t) {
    case element_type::f64: return "double";
    case element_type::f32: return "float";
    case element_type::f16: case element_type::bf16: case element_type::u16: return "unsigned short";
    case element_type::i64: return "long long";
    case element_type::i32: return "int";
    case element_type::i16: return "short";
    case element_type::i8: return "signed char";
    case element_type::u64: return "unsigned long long";
    case element_type::u32: return "unsigned int";
    case element_type::u8: return "unsigned char";
  }
  return "?";
}

// The source element as a C++ value: narrow floats widened to float.
std::string widened(element_type s) {
  if (s == element_type::f16) return "pb_f16_to_f32(x)";
  if (s == element_type::bf16) return "pb_bf16_to_f32(x)";
  return "x";
}

// The body of dst = convert(x), with C++ conversion semantics and one rounding.
std::string conversion(element_type s, element_type d) {
  if (s == d) return "return x;";
  const std::string D = storage(d);
  const bool sf = is_floating(s), df = is_floating(d);
  if (!sf && !df) return "return (" + D + ")x;";
  if (!sf) {   // integer -> float: exact up to 2^53 through double
    if (d == element_type::f64) return "return (double)x;";
    if (d == element_type::f32) return "return (float)x;";
    return std::string("return ") + (d == element_type::f16 ? "pb_f64_to_f16" : "pb_f64_to_bf16") + "((double)x);";
  }
  if (!df) return "return (" + D + ")" + widened(s) + ";";   // truncation toward zero
  if (s == element_type::f64 || d == element_type::f64) {
    const std::string w = "(double)" + widened(s);
    if (d == element_type::f64) return "return " + w + ";";
    if (d == element_type::f32) return "return (float)" + w + ";";
    return std::string("return ") + (d == element_type::f16 ? "pb_f64_to_f16" : "pb_f64_to_bf16") + "(" + w + ");";
  }
  const std::string w = widened(s);   // exact in float
  if (d == element_type::f32) return "return " + w + ";";
  return std::string("return ") + (d == element_type::f16 ? "pb_f32_to_f16" : "pb_f32_to_bf16") + "(" + w + ");";
}

const char* fill_storage(std::size_t bytes) {
  switch (bytes) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    default: return "unsigned long long";
  }
}

// Magic number and shift for n / d by multiply-high, valid for n, d < 2^31 (Granlund and
// Montgomery's round-up method, as PyTorch's IntDivider).
void magic_for(std::uint64_t d, std::uint32_t& magic, std::uint32_t& shift) {
  std::uint32_t s = 0;
  while (s < 32 && (std::uint64_t{1} << s) < d) ++s;
  const std::uint64_t m = ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << s) - d)) / d + 1;
  magic = static_cast<std::uint32_t>(m);
  shift = s;
}

// Dims of extent 1 dropped, then neighbours merged where both views step through them as one.
step_args make_args(const bound_view& src, const bound_view& dst) {
  struct dim {
    std::int64_t extent, ss, ds;
  };
  std::vector<dim> dims;
  for (std::size_t k = 0; k < dst.shape.size(); ++k) {
    if (dst.shape[k] == 1) continue;
    const dim next{dst.shape[k], src.strides[k], dst.strides[k]};
    if (!dims.empty() && dims.back().ss == next.ss * next.extent && dims.back().ds == next.ds * next.extent) {
      dims.back() = {dims.back().extent * next.extent, next.ss, next.ds};
    } else {
      dims.push_back(next);
    }
  }
  if (dims.empty()) dims.push_back({1, 0, 0});
  step_args a;
  a.src = src.first_byte();
  a.dst = dst.first_byte();
  a.n = dst.elements();
  a.rank = static_cast<std::int32_t>(dims.size());
  std::int64_t src_span = 0, dst_span = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    a.shape[k] = dims[k].extent;
    a.src_stride[k] = dims[k].ss;
    a.dst_stride[k] = dims[k].ds;
    src_span += (dims[k].extent - 1) * dims[k].ss;
    dst_span += (dims[k].extent - 1) * dims[k].ds;
  }
  constexpr std::int64_t k_narrow = std::int64_t{1} << 31;
  a.narrow = a.n < k_narrow && src_span < k_narrow && dst_span < k_narrow ? 1 : 0;
  if (a.narrow) {
    for (std::size_t k = 0; k < dims.size(); ++k) magic_for(static_cast<std::uint64_t>(a.shape[k]), a.magic[k], a.shift[k]);
  }
  return a;
}

// Compiled images, by architecture and source: every plan with the same step kernels shares
// one NVRTC compile per process (a plan is loaded per configuration and run).
std::vector<std::byte> compiled(const std::string& source, const std::string& arch) {
  static std::mutex lock;
  static std::map<std::string, std::vector<std::byte>> cache;
  const std::string key = arch + "\n" + source;
  {
    std::lock_guard<std::mutex> g(lock);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto image = cuda::compile_to_cubin(source, "portbench_steps.cu", arch);
  std::lock_guard<std::mutex> g(lock);
  return cache.emplace(key, std::move(image)).first->second;
}

}  // namespace

std::size_t step_kernel_param_bytes() noexcept { return sizeof(step_args); }

std::string step_kernel_source(const step_kernel_set& set) {
  std::string src = k_common;
  // One conversion struct per type pair, shared by copies and sums.
  std::set<std::pair<element_type, element_type>> defined;
  const auto cvt_struct = [&](element_type s, element_type d) {
    const std::string cvt = "pb_cvt_" + std::string(to_string(s)) + "_" + to_string(d);
    if (defined.insert({s, d}).second) {
      src += "struct " + cvt + " { static __device__ __forceinline__ " + std::string(storage(d)) + " cvt(" + storage(s) +
             " x) { " + conversion(s, d) + " } };\n";
    }
    return cvt;
  };
  for (const auto& [s, d] : set.copies) {
    const std::string S = storage(s), D = storage(d), name = copy_entry(s, d);
    const std::string cvt = cvt_struct(s, d);
    src += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(k_step_block) + ") " + name +
           "(const portbench_step_args a) {\n  if (a.narrow) pb_copy<" + S + ", " + D + ", " + cvt +
           ", true>(a);\n  else pb_copy<" + S + ", " + D + ", " + cvt + ", false>(a);\n}\n";
  }
  for (std::size_t bytes : set.fill_sizes) {
    const std::string T = fill_storage(bytes);
    src += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(k_step_block) + ") " + fill_entry(bytes) +
           "(const portbench_step_args a) {\n  if (a.narrow) pb_fill<" + T + ", true>(a);\n  else pb_fill<" + T +
           ", false>(a);\n}\n";
  }
  for (const auto& [s, d] : set.sums) {
    const element_type acc = sum_accumulator(s, d);
    const std::string targs = std::string(storage(s)) + ", " + storage(d) + ", " + storage(acc) + ", " + cvt_struct(s, acc) +
                              ", " + cvt_struct(acc, d);
    src += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(k_step_block) + ") " + sum_entry(s, d) +
           "(const portbench_step_args a) {\n  if (a.narrow) pb_sum<" + targs + ", true>(a);\n  else pb_sum<" + targs +
           ", false>(a);\n}\n";
  }
  return src;
}

step_kernels::step_kernels(cuda::context_ptr ctx, const step_kernel_set& set) : m_ctx(std::move(ctx)) {
  const std::string arch = "sm_" + std::to_string(m_ctx->info().cc_major) + std::to_string(m_ctx->info().cc_minor);
  const auto module = cuda::module::load(m_ctx, compiled(step_kernel_source(set), arch), "portbench step kernels (NVRTC)");
  for (const auto& [src, dst] : set.copies) {
    const std::string e = copy_entry(src, dst);
    m_kernels.emplace(e, cuda::kernel(module, e));
  }
  for (std::size_t bytes : set.fill_sizes) m_kernels.emplace(fill_entry(bytes), cuda::kernel(module, fill_entry(bytes)));
  for (const auto& [src, dst] : set.sums) m_kernels.emplace(sum_entry(src, dst), cuda::kernel(module, sum_entry(src, dst)));
}

void step_kernels::launch(const std::string& entry, const cuda::stream& s, void* args, std::int64_t elements) const {
  if (elements == 0) return;
  auto it = m_kernels.find(entry);
  if (it == m_kernels.end()) throw bundle_error("portbench step kernels", "no kernel '" + entry + "' was compiled for this plan");
  const dim3 grid = step_grid(elements, static_cast<unsigned>(m_ctx->info().sm_count));
  void* params[] = {args};
  const CUresult rc = m_ctx->api().cuLaunchKernel(it->second.native(), grid[0], grid[1], grid[2], k_step_block, 1, 1, 0,
                                                  s.native(), params, nullptr);
  if (rc != CUDA_SUCCESS) throw cuda::cuda_error(rc, "cuLaunchKernel", "harness step kernel '" + entry + "'");
}

void step_kernels::copy(const cuda::stream& s, const bound_copy& c) const {
  step_args a = make_args(c.src, c.dst);
  launch(copy_entry(c.src.type, c.dst.type), s, &a, a.n);
}

void step_kernels::sum(const cuda::stream& s, const bound_sum& b) const {
  // src without the summed axis indexes like dst (equal shapes); the axis is the inner loop,
  // its offsets in 64 bits on either path.
  bound_view outer = b.src;
  outer.shape = sum_result_shape(b.src.shape, b.axis);
  outer.strides.clear();
  for (std::size_t k = 0; k < b.src.strides.size(); ++k) {
    if (k != b.axis) outer.strides.push_back(b.src.strides[k]);
  }
  if (outer.strides.empty()) outer.strides.push_back(0);
  step_args a = make_args(outer, b.dst);
  a.reduce_n = b.src.shape[b.axis];
  a.reduce_stride = b.src.strides[b.axis];
  launch(sum_entry(b.src.type, b.dst.type), s, &a, a.n);
}

void step_kernels::fill(const cuda::stream& s, const bound_view& dst, std::uint64_t bits) const {
  step_args a = make_args(dst, dst);
  a.src = 0;
  a.pattern = bits;
  launch(fill_entry(size_of(dst.type)), s, &a, a.n);
}

}  // namespace portbench::bundle
