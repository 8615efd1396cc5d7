// SPDX-License-Identifier: Apache-2.0
// dropout: 1-D, training: y_i = x_i / (1 - p) where kept, else 0; eval: y = x. Backends draw
// different masks (cuTile's LCG + xorshift, Triton's Philox), so the check is statistical, as
// upstream's: every element must be 0 or x/(1-p) (x is never 0 here, so a zero means dropped),
// and the dropped fraction must be within 0.04 of p. write_reference uses cuTile's generator;
// verify() notes how many kept/dropped decisions agree with it (informational).
#include <cmath>

#include "common.hpp"
#include "ops.hpp"
#include "portbench/reference/compare.hpp"
#include "portbench/reference/parallel.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t m;
  double p;
  bool inplace, training;
  std::uint32_t rng_seed;
  dtype type;
  explicit params(const config& c)
      : m(dim(c, "m")), p(c.real_or("p", 0.5)), inplace(c.flag("inplace", false)), training(c.flag("training", true)),
        rng_seed(static_cast<std::uint32_t>(c.integer_or("rng_seed", 0))), type(float_type(c)) {
    if (!(p >= 0 && p < 1)) throw spec_error(c.op + ": p must be in [0, 1)");
  }
  [[nodiscard]] std::string out() const { return inplace ? "x" : "y"; }
};

// cuTile's stateless uniform: int32 LCG, xorshift (>>16, <<8, >>4), 31 bits, / (2^31 - 1).
double cutile_uniform(std::int64_t i, std::uint32_t seed) {
  std::uint32_t r = static_cast<std::uint32_t>(i) * 1103515245U + seed;
  r ^= r >> 16;
  r ^= r << 8;
  r ^= r >> 4;
  return static_cast<double>(r & 0x7FFFFFFFU) / 2147483647.0;
}

constexpr std::int64_t grain = 1 << 16;

class dropout final : public operator_spec {
 public:
  [[nodiscard]] std::string name() const override { return "dropout"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    if (p.inplace) return {dense("x", p.type, {p.m}, tensor_role::inout)};
    return {dense("x", p.type, {p.m}, tensor_role::in), dense("y", p.type, {p.m}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      {"x", 0.125, 2.0},  // never zero, so 0 in y always means "dropped"
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    return {bytes_of(p.type, 2.0 * static_cast<double>(p.m)), static_cast<double>(p.m)};
  }
  [[nodiscard]] tolerance upstream_tolerance(const config& c, const std::string&) const override {
    return default_tolerance(params(c).type);
  }
  void write_reference(const config& c, std::vector<host_tensor>& ts, unsigned threads) const override {
    const params p(c);
    const host_tensor& x = find_tensor(ts, "x");
    host_tensor& y = find_tensor(ts, p.out());
    const tensor_reader xr(x);
    parallel_blocks(p.m, grain, threads, [&](std::int64_t, std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        const double v = xr[i];
        const bool keep = !p.training || cutile_uniform(i, p.rng_seed) > p.p;
        store_element(y.bytes.data(), p.type, i, !keep ? 0.0 : p.training ? v / (1 - p.p) : v);
      }
    });
  }
  [[nodiscard]] std::vector<compare_report> verify(const config& c, const std::vector<host_tensor>& ts) const override {
    return verify(c, ts, verify_options{});
  }
  [[nodiscard]] std::vector<compare_report> verify(const config& c, const std::vector<host_tensor>& ts,
                                                   const verify_options& o) const override {
    const params p(c);
    const host_tensor& out = find_tensor(ts, p.out());
    std::vector<host_tensor> regenerated;
    const host_tensor* x = &find_tensor(ts, "x");
    if (p.inplace) {
      if (o.original_inputs != nullptr) {
        x = &find_tensor(*o.original_inputs, "x");
      } else if (o.seed) {
        regenerated = make_inputs(*this, c, *o.seed);
        x = &find_tensor(regenerated, "x");
      } else {
        compare_report r;
        r.tensor = "x";
        r.type = p.type;
        r.total = p.m;
        r.note = "in-place dropout: verify_options.seed or original_inputs is needed";
        return {r};
      }
    }
    const tensor_reader xr(*x), yr(out);
    const std::int64_t blocks = block_count(p.m, grain);
    std::vector<error_accumulator> acc(static_cast<std::size_t>(blocks), error_accumulator(p.type, default_tolerance(p.type)));
    std::vector<std::int64_t> dropped(static_cast<std::size_t>(blocks)), agree(static_cast<std::size_t>(blocks));
    parallel_blocks(p.m, grain, o.threads, [&](std::int64_t blk, std::int64_t b, std::int64_t e) {
      // Accumulate locally and store once: neighbouring blocks' slots share cache lines, and
      // per-element updates there made 16 threads slower than one.
      error_accumulator a(p.type, default_tolerance(p.type));
      std::int64_t n_dropped = 0, n_agree = 0;
      for (std::int64_t i = b; i < e; ++i) {
        const double v = xr[i], got = yr[i];
        if (!p.training) {
          a.add(i, got, v, 0.0);
          continue;
        }
        const bool drop = got == 0.0;
        n_dropped += drop;
        n_agree += drop == !(cutile_uniform(i, p.rng_seed) > p.p);
        a.add(i, got, drop ? 0.0 : v / (1 - p.p), 0.0);
      }
      acc[static_cast<std::size_t>(blk)] = std::move(a);
      dropped[static_cast<std::size_t>(blk)] = n_dropped;
      agree[static_cast<std::size_t>(blk)] = n_agree;
    });
    error_accumulator values(p.type, default_tolerance(p.type));
    std::int64_t n_drop = 0, n_agree = 0;
    for (std::size_t b = 0; b < acc.size(); ++b) {
      values.merge(acc[b]);
      n_drop += dropped[b];
      n_agree += agree[b];
    }
    auto kept = values.report(p.out(), p.training ? "all" : "exact", p.m);
    if (!p.training) {
      // Eval: the identity, bit for bit.
      kept.method = "exact";
      return {kept};
    }
    kept.note = "kept elements against x/(1-p); " + std::to_string(n_agree) + " of " + std::to_string(p.m) +
                " keep decisions match cuTile's generator with rng_seed " + std::to_string(p.rng_seed);
    const double ratio = static_cast<double>(n_drop) / static_cast<double>(p.m);
    error_accumulator stat(p.type, {});
    stat.add_verdict(0, std::abs(ratio - p.p) < 0.04);
    auto r = stat.report(p.out(), "keep_ratio", p.m);
    r.note = "dropped fraction " + std::to_string(ratio) + ", p " + std::to_string(p.p) + ", allowed |diff| < 0.04";
    return {kept, r};
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_dropout() { return std::make_unique<dropout>(); }

}  // namespace portbench::reference::detail
