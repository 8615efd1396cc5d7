// SPDX-License-Identifier: Apache-2.0
#include "portbench/verify/input_generator.hpp"

#include <algorithm>
#include <string>

#include "portbench/cuda/error.hpp"
#include "portbench/cuda/nvrtc.hpp"
#include "portbench/error.hpp"

namespace portbench::verify {
namespace {

// The one kernel parameter; all members 8 bytes, so host and device agree on the layout.
struct fill_args {
  std::uint64_t dst = 0;
  std::int64_t n = 0;
  std::uint64_t key = 0;
  double lo = 0, span = 0;   ///< span = hi - lo, rounded once on the host as fill_uniform does
};
static_assert(sizeof(fill_args) == 40);

// Mirrors reference/random.hpp (mix64, uniform01) and reference/half.hpp (encode_float) step by
// step; the double product and sum are rounded by __dmul_rn and __dadd_rn, never fused into an
// FMA, as the host (x86-64 without FMA) rounds them.
constexpr const char* k_source = R"(
struct pb_fill_args { unsigned long long dst; long long n; unsigned long long key; double lo, span; };

__device__ __forceinline__ unsigned long long pb_mix64(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ double pb_value(const pb_fill_args& a, long long i) {
  const unsigned long long r = pb_mix64(a.key + (unsigned long long)i * 0x9E3779B97F4A7C15ull) >> 11;
  const double u = __dmul_rn((double)r, __longlong_as_double(0x3CA0000000000000ll));   // * 2^-53, exact
  return __dadd_rn(a.lo, __dmul_rn(a.span, u));
}

// Round to nearest even straight from the double into a format of E exponent and M mantissa
// bits; FN: the "fn" layout (no inf, overflow is NaN).
template <int E, int M, bool FN>
__device__ __forceinline__ unsigned int pb_encode(double x) {
  const unsigned int sign_bit = 1u << (E + M);
  const unsigned int exp_mask = ((1u << E) - 1) << M;
  const int emin = 1 - ((1 << (E - 1)) - 1);
  const unsigned int max_finite = FN ? (exp_mask | ((1u << M) - 2)) : ((exp_mask - (1u << M)) | ((1u << M) - 1));
  const unsigned int nan_bits = FN ? (exp_mask | ((1u << M) - 1)) : (exp_mask | (1u << (M - 1)));
  const unsigned long long b = (unsigned long long)__double_as_longlong(x);
  const unsigned int sign = (b >> 63) != 0 ? sign_bit : 0u;
  const unsigned long long mag = b & 0x7FFFFFFFFFFFFFFFull;
  if (mag >= 0x7FF0000000000000ull) {
    if (mag > 0x7FF0000000000000ull || FN) return sign | nan_bits;
    return sign | exp_mask;
  }
  const int e = (int)(mag >> 52) - 1023;
  if ((mag >> 52) == 0 || e < emin - M - 1) return sign;
  const unsigned long long mant = (mag & 0x000FFFFFFFFFFFFFull) | (1ull << 52);
  const int qe = e > emin ? e : emin;
  const int shift = 52 - M + (qe - e);
  unsigned long long q = mant >> shift;
  const unsigned long long rem = mant & ((1ull << shift) - 1);
  const unsigned long long half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1ull) != 0)) ++q;
  const unsigned long long bits = ((unsigned long long)(qe - emin) << M) + q;
  if (bits > max_finite) return sign | (FN ? nan_bits : exp_mask);
  return sign | (unsigned int)bits;
}

// Integers: the floor of the draw, saturating (as the host's to_integer of an integral value).
template <typename T>
__device__ __forceinline__ T pb_integer(double v, double lo_limit, double hi_limit, T lo_value, T hi_value) {
  const double r = floor(v);
  if (r != r) return (T)0;
  if (r <= lo_limit) return lo_value;
  if (r >= hi_limit) return hi_value;
  return (T)r;
}

#define PB_FILL(NAME, T, EXPR)                                                                      \
  extern "C" __global__ void __launch_bounds__(256) NAME(const pb_fill_args a) {                   \
    T* dst = reinterpret_cast<T*>(a.dst);                                                         \
    const long long step = (long long)gridDim.x * blockDim.x;                                     \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {    \
      const double v = pb_value(a, i);                                                            \
      dst[i] = EXPR;                                                                              \
    }                                                                                             \
  }

PB_FILL(portbench_fill_fp64, double, v)
PB_FILL(portbench_fill_fp32, float, __double2float_rn(v))
PB_FILL(portbench_fill_fp16, unsigned short, (unsigned short)(pb_encode<5, 10, false>(v)))
PB_FILL(portbench_fill_bf16, unsigned short, (unsigned short)(pb_encode<8, 7, false>(v)))
PB_FILL(portbench_fill_fp8e4m3, unsigned char, (unsigned char)(pb_encode<4, 3, true>(v)))
PB_FILL(portbench_fill_fp8e5m2, unsigned char, (unsigned char)(pb_encode<5, 2, false>(v)))
PB_FILL(portbench_fill_i64, long long,
        pb_integer<long long>(v, -9223372036854775808.0, 9223372036854775808.0, (long long)(-9223372036854775807ll - 1),
                              9223372036854775807ll))
PB_FILL(portbench_fill_i32, int, pb_integer<int>(v, -2147483648.0, 2147483647.0, (int)(-2147483647 - 1), 2147483647))
PB_FILL(portbench_fill_i16, short, pb_integer<short>(v, -32768.0, 32767.0, (short)-32768, (short)32767))
PB_FILL(portbench_fill_i8, signed char, pb_integer<signed char>(v, -128.0, 127.0, (signed char)-128, (signed char)127))
PB_FILL(portbench_fill_u8, unsigned char, pb_integer<unsigned char>(v, 0.0, 255.0, (unsigned char)0, (unsigned char)255))
PB_FILL(portbench_fill_bool, unsigned char, (unsigned char)(floor(v) != 0.0 ? 1 : 0))
)";

constexpr reference::dtype k_types[] = {reference::dtype::f64,    reference::dtype::f32,    reference::dtype::f16,
                                        reference::dtype::bf16,   reference::dtype::f8e4m3, reference::dtype::f8e5m2,
                                        reference::dtype::i64,    reference::dtype::i32,    reference::dtype::i16,
                                        reference::dtype::i8,     reference::dtype::u8,     reference::dtype::boolean};

}  // namespace

const char* input_generator_source() noexcept { return k_source; }
std::string input_generator_entry(reference::dtype t) { return "portbench_fill_" + std::string(reference::to_string(t)); }
std::size_t input_generator_param_bytes() noexcept { return sizeof(fill_args); }

input_generator::input_generator(cuda::context_ptr ctx) : m_ctx(std::move(ctx)) {
  const std::string arch = "sm_" + std::to_string(m_ctx->info().cc_major) + std::to_string(m_ctx->info().cc_minor);
  m_module = cuda::module::load(m_ctx, cuda::compile_to_cubin(k_source, "portbench_inputs.cu", arch),
                                "portbench input generator (NVRTC)");
  for (auto t : k_types) m_kernels.emplace(t, cuda::kernel(m_module, input_generator_entry(t)));
}

void input_generator::enqueue(const cuda::stream& s, const device_fill& f) const {
  if (f.elements <= 0) return;
  fill_args a{f.address, f.elements, f.key, f.lo, f.hi - f.lo};
  void* params[] = {&a};
  constexpr std::int64_t k_block = 256;
  const auto blocks = static_cast<unsigned>(
      std::min<std::int64_t>((f.elements + k_block - 1) / k_block, std::int64_t{m_ctx->info().sm_count} * 16));
  const CUresult rc = m_ctx->api().cuLaunchKernel(m_kernels.at(f.type).native(), blocks, 1, 1, k_block, 1, 1, 0,
                                                  s.native(), params, nullptr);
  if (rc != CUDA_SUCCESS) throw cuda::cuda_error(rc, "cuLaunchKernel", "input generator " + input_generator_entry(f.type));
}

}  // namespace portbench::verify
