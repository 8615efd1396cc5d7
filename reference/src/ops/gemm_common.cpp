// SPDX-License-Identifier: Apache-2.0
// Freivalds' check and sampled tiles for products; see gemm_common.hpp. Column-blocked
// matrix-vector products use a fixed block count, so results do not depend on the threads.
#include "gemm_common.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>

#include "portbench/reference/cache.hpp"
#include "portbench/reference/compare.hpp"
#include "portbench/reference/parallel.hpp"
#include "portbench/reference/random.hpp"
#include "portbench/reference/tensor_access.hpp"

namespace portbench::reference::detail {
namespace {

constexpr int vectors = 2;           // Freivalds vectors per product
constexpr std::int64_t tile_side = 32;
constexpr std::int64_t col_blocks = 64;

// y[R x vectors] = V x, V(i, c) = t[base + i*rs + c*cs], x[C x vectors] (row-major).
std::vector<double> matvec(const tensor_reader& t, std::int64_t base, std::int64_t rs, std::int64_t cs,
                           std::int64_t rows, std::int64_t cols, const std::vector<double>& x, unsigned threads) {
  std::vector<double> y(static_cast<std::size_t>(rows * vectors), 0.0);
  if (std::abs(cs) <= std::abs(rs)) {
    // Rows are contiguous (or nearly): one row per task.
    parallel_blocks(rows, std::max<std::int64_t>(1, rows / 256), threads, [&](std::int64_t, std::int64_t b, std::int64_t e) {
      std::vector<double> row(static_cast<std::size_t>(cols));
      for (std::int64_t i = b; i < e; ++i) {
        double acc[vectors] = {};
        t.read(base + i * rs, cs, cols, row.data());
        for (std::int64_t c = 0; c < cols; ++c) {
          const double v = row[static_cast<std::size_t>(c)];
          for (int q = 0; q < vectors; ++q) acc[q] += v * x[static_cast<std::size_t>(c * vectors + q)];
        }
        for (int q = 0; q < vectors; ++q) y[static_cast<std::size_t>(i * vectors + q)] = acc[q];
      }
    });
    return y;
  }
  // Columns are contiguous: partial sums per column block, added in block order.
  const std::int64_t grain = std::max<std::int64_t>(1, (cols + col_blocks - 1) / col_blocks);
  const std::int64_t nb = block_count(cols, grain);
  std::vector<std::vector<double>> part(static_cast<std::size_t>(nb));
  parallel_blocks(cols, grain, threads, [&](std::int64_t blk, std::int64_t b, std::int64_t e) {
    auto& p = part[static_cast<std::size_t>(blk)];
    p.assign(static_cast<std::size_t>(rows * vectors), 0.0);
    std::vector<double> col(static_cast<std::size_t>(rows));
    for (std::int64_t c = b; c < e; ++c) {
      const double x0 = x[static_cast<std::size_t>(c * vectors)], x1 = x[static_cast<std::size_t>(c * vectors + 1)];
      t.read(base + c * cs, rs, rows, col.data());
      for (std::int64_t i = 0; i < rows; ++i) {
        const double v = col[static_cast<std::size_t>(i)];
        p[static_cast<std::size_t>(i * vectors)] += v * x0;
        p[static_cast<std::size_t>(i * vectors + 1)] += v * x1;
      }
    }
  });
  for (const auto& p : part) {
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += p[i];
  }
  return y;
}

struct expectation {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> tile;  // rows x cols
  std::vector<double> abs_terms;  // rows x cols: sum_k |a_ik b_kj|, the size of the terms
  std::vector<double> x;     // n x vectors
  std::vector<double> z;     // m x vectors: A (B x)
};

std::vector<std::int64_t> pick(std::int64_t n, std::int64_t count, sample_rng& rng) {
  std::vector<std::int64_t> out;
  if (n <= count) {
    for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  out = {0, n - 1};
  while (static_cast<std::int64_t>(out.size()) < count) out.push_back(rng.below(n));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

expectation expect(const gemm_problem& p, const std::vector<host_tensor>& ts, sample_rng& rng, double scale,
                   unsigned threads) {
  const tensor_reader a(find_tensor(ts, p.a)), b(find_tensor(ts, p.b));
  expectation e;
  const auto side = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(tile_side) * scale));
  e.rows = pick(p.m, side, rng);
  e.cols = pick(p.n, side, rng);
  Eigen::MatrixXd ai(static_cast<Eigen::Index>(e.rows.size()), p.k), bj(p.k, static_cast<Eigen::Index>(e.cols.size()));
  for (std::size_t r = 0; r < e.rows.size(); ++r) {
    for (std::int64_t kk = 0; kk < p.k; ++kk) ai(static_cast<Eigen::Index>(r), kk) = a[p.a_base + e.rows[r] * p.a_rs + kk * p.a_cs];
  }
  for (std::int64_t kk = 0; kk < p.k; ++kk) {
    for (std::size_t cc = 0; cc < e.cols.size(); ++cc) bj(kk, static_cast<Eigen::Index>(cc)) = b[p.b_base + kk * p.b_rs + e.cols[cc] * p.b_cs];
  }
  const Eigen::MatrixXd t = ai * bj;
  const Eigen::MatrixXd t_abs = ai.cwiseAbs() * bj.cwiseAbs();
  e.tile.resize(static_cast<std::size_t>(t.size()));
  e.abs_terms.resize(static_cast<std::size_t>(t.size()));
  for (Eigen::Index r = 0; r < t.rows(); ++r) {
    for (Eigen::Index cc = 0; cc < t.cols(); ++cc) {
      e.tile[static_cast<std::size_t>(r * t.cols() + cc)] = t(r, cc);
      e.abs_terms[static_cast<std::size_t>(r * t.cols() + cc)] = t_abs(r, cc);
    }
  }
  e.x.resize(static_cast<std::size_t>(p.n * vectors));
  for (auto& v : e.x) v = (rng.next() & 1U) != 0 ? 1.0 : -1.0;
  const auto y = matvec(b, p.b_base, p.b_rs, p.b_cs, p.k, p.n, e.x, threads);  // B x  [k]
  e.z = matvec(a, p.a_base, p.a_rs, p.a_cs, p.m, p.k, y, threads);            // A y  [m]
  return e;
}

void compare(const gemm_problem& p, const std::vector<host_tensor>& ts, const expectation& e, const tolerance& tol,
             error_accumulator& tile_acc, error_accumulator& frei_acc, unsigned threads) {
  const host_tensor& ct = find_tensor(ts, p.c);
  const tensor_reader c(ct);
  const double s = rms_of(e.tile.data(), static_cast<std::int64_t>(e.tile.size()));
  const double per_term = accumulation_per_term(tol, p.k);
  for (std::size_t r = 0; r < e.rows.size(); ++r) {
    for (std::size_t cc = 0; cc < e.cols.size(); ++cc) {
      const std::int64_t idx = p.c_base + e.rows[r] * p.c_rs + e.cols[cc] * p.c_cs;
      const std::size_t at = r * e.cols.size() + cc;
      tile_acc.add(idx, c[idx], e.tile[at], s, per_term * e.abs_terms[at]);
    }
  }
  // Freivalds: per row, |C x - A B x| against the rounding noise a correct row would have,
  // eps * sqrt(sum_j (|C_ij| + s_i)^2), s_i the row's rms. That ratio estimates the row's rms
  // normalised error; whole wrong tiles or rows stand out by far.
  const dtype ctype = ct.spec.type;
  const double eps = machine_epsilon(ctype);
  const std::int64_t grain = std::max<std::int64_t>(1, (p.m + 255) / 256);
  std::vector<error_accumulator> parts(static_cast<std::size_t>(block_count(p.m, grain)), error_accumulator(ctype, tol));
  parallel_blocks(p.m, grain, threads, [&](std::int64_t blk, std::int64_t b, std::int64_t end) {
    auto& acc = parts[static_cast<std::size_t>(blk)];
    std::vector<double> row(static_cast<std::size_t>(p.n));
    for (std::int64_t i = b; i < end; ++i) {
      double cx[vectors] = {}, sum_abs = 0, sum_sq = 0;
      bool finite = true;
      const std::int64_t rb = p.c_base + i * p.c_rs;
      c.read(rb, p.c_cs, p.n, row.data());
      for (std::int64_t j = 0; j < p.n; ++j) {
        const double v = row[static_cast<std::size_t>(j)];
        finite = finite && std::isfinite(v);
        sum_abs += std::abs(v);
        sum_sq += v * v;
        for (int q = 0; q < vectors; ++q) cx[q] += v * e.x[static_cast<std::size_t>(j * vectors + q)];
      }
      double d = 0;
      for (int q = 0; q < vectors; ++q) d = std::max(d, std::abs(cx[q] - e.z[static_cast<std::size_t>(i * vectors + q)]));
      const auto n = static_cast<double>(p.n);
      const double si = std::sqrt(sum_sq / n);
      const double noise = eps * std::sqrt(sum_sq + 2 * si * sum_abs + n * si * si) + 0.5 * min_subnormal(ctype);
      // If every element met allclose, |d| <= sum_j (atol + rtol |C_ij|) (|x_j| = 1).
      const bool ok = d <= n * tol.atol + tol.rtol * sum_abs;
      acc.add_normalised(rb, d / noise, ok, finite && std::isfinite(d));
    }
  });
  for (const auto& a : parts) frei_acc.merge(a);
}

}  // namespace

tolerance with_long_sum_accumulation(tolerance t, dtype operands) noexcept {
  if (operands == dtype::f16 || operands == dtype::bf16) t.accumulation_eps = 0x1.0p-13;
  return t;
}

double accumulation_per_term(const tolerance& t, std::int64_t k) noexcept {
  const double ku = static_cast<double>(k) * 0x1.0p-24;
  const double gamma_k = ku < 1 ? ku / (1 - ku) : t.accumulation_eps;
  return std::min(t.accumulation_eps, gamma_k);
}

void set_layout(std::int64_t& rs, std::int64_t& cs, std::int64_t rows, std::int64_t cols, bool transposed) {
  if (transposed) {
    rs = 1;
    cs = rows;
  } else {
    rs = cols;
    cs = 1;
  }
}

std::vector<uniform_fill> gemm_operator::uniform_fills(const config& c) const {
  const auto probs = problems(c);
  const std::int64_t k = probs.empty() ? 1 : probs.front().k;
  std::vector<uniform_fill> fills;
  for (const auto& t : tensors(c)) {
    if (t.role == tensor_role::out) continue;
    // Slightly positive mean (0.1 of the range): C has a K-proportional mean and a sqrt(K) spread,
    // so a skipped or repeated K block shifts every element. fp8 (max 448) gets a range that keeps
    // |C| around 10 for any K.
    if (t.type == dtype::f8e4m3 || t.type == dtype::f8e5m2) {
      const double w = std::min(1.0, std::sqrt(30.0 / std::sqrt(static_cast<double>(k))));
      fills.push_back({t.name, -w, w});
    } else {
      fills.push_back({t.name, -1.0, 1.2});
    }
  }
  return fills;
}

std::vector<compare_report> gemm_operator::verify(const config& c, const std::vector<host_tensor>& ts) const {
  return verify(c, ts, verify_options{});
}

std::vector<compare_report> gemm_operator::verify(const config& c, const std::vector<host_tensor>& ts,
                                                  const verify_options& o) const {
  const unsigned threads = resolve_threads(o.threads);
  const auto probs = problems(c);
  const bool cacheable = o.cache != nullptr && o.seed.has_value();
  std::shared_ptr<const cache_entry> cached;
  std::string key;
  std::uint64_t fp = 0;
  if (cacheable) {
    key = cache_key(name(), c, *o.seed);
    fp = input_fingerprint(ts);
    cached = o.cache->find(key, fp);
  }
  auto fresh = std::make_shared<cache_entry>();
  fresh->fingerprint = fp;
  sample_rng rng(stream_key(o.seed.value_or(0), c.id()));

  // Accumulators per output tensor (a batched product has several problems per tensor).
  std::map<std::string, std::pair<error_accumulator, error_accumulator>> acc;
  std::vector<std::string> order;
  for (std::size_t pi = 0; pi < probs.size(); ++pi) {
    const auto& p = probs[pi];
    const host_tensor& ct = find_tensor(ts, p.c);
    if (acc.find(p.c) == acc.end()) {
      const tolerance tol = upstream_tolerance(c, p.c);
      acc.emplace(p.c, std::make_pair(error_accumulator(ct.spec.type, tol), error_accumulator(ct.spec.type, tol)));
      order.push_back(p.c);
    }
    expectation e;
    const std::string pre = "p" + std::to_string(pi) + ".";
    const cache_block* rows = cached ? cached->find(pre + "rows") : nullptr;
    if (rows != nullptr) {
      e.rows = rows->ints;
      e.cols = cached->find(pre + "cols")->ints;
      e.tile = cached->find(pre + "tile")->reals;
      e.abs_terms = cached->find(pre + "abs_terms")->reals;
      e.x = cached->find(pre + "x")->reals;
      e.z = cached->find(pre + "z")->reals;
    } else {
      e = expect(p, ts, rng, o.sample_scale, threads);
      fresh->blocks.push_back({pre + "rows", e.rows, {}});
      fresh->blocks.push_back({pre + "cols", e.cols, {}});
      fresh->blocks.push_back({pre + "tile", {}, e.tile});
      fresh->blocks.push_back({pre + "abs_terms", {}, e.abs_terms});
      fresh->blocks.push_back({pre + "x", {}, e.x});
      fresh->blocks.push_back({pre + "z", {}, e.z});
    }
    auto& [tile_acc, frei_acc] = acc.at(p.c);
    compare(p, ts, e, upstream_tolerance(c, p.c), tile_acc, frei_acc, threads);
  }
  if (cacheable && !cached) o.cache->store(key, fresh);

  std::vector<compare_report> out;
  for (const auto& name : order) {
    const auto& [tile_acc, frei_acc] = acc.at(name);
    const std::int64_t total = find_tensor(ts, name).spec.elements();
    auto t = tile_acc.report(name, "tile", total);
    t.note = "exact fp64 tiles of sampled rows x columns" + std::string(cached ? "; expected values from the cache" : "");
    auto f = frei_acc.report(name, "freivalds", total);
    f.note = "checked counts output rows; norm err = |Cx - ABx| / (eps * row noise), 2 random +-1 vectors";
    out.push_back(std::move(t));
    out.push_back(std::move(f));
  }
  return out;
}

void gemm_operator::write_reference(const config& c, std::vector<host_tensor>& ts, unsigned threads) const {
  (void)threads;
  for (const auto& p : problems(c)) {
    const tensor_reader a(find_tensor(ts, p.a)), b(find_tensor(ts, p.b));
    host_tensor& ct = find_tensor(ts, p.c);
    Eigen::MatrixXd am(p.m, p.k), bm(p.k, p.n);
    for (std::int64_t i = 0; i < p.m; ++i) {
      for (std::int64_t kk = 0; kk < p.k; ++kk) am(i, kk) = a[p.a_base + i * p.a_rs + kk * p.a_cs];
    }
    for (std::int64_t kk = 0; kk < p.k; ++kk) {
      for (std::int64_t j = 0; j < p.n; ++j) bm(kk, j) = b[p.b_base + kk * p.b_rs + j * p.b_cs];
    }
    const Eigen::MatrixXd cm = am * bm;
    for (std::int64_t i = 0; i < p.m; ++i) {
      for (std::int64_t j = 0; j < p.n; ++j) store_element(ct.bytes.data(), ct.spec.type, p.c_base + i * p.c_rs + j * p.c_cs, cm(i, j));
    }
  }
}

cost_model gemm_operator::cost(const config& c) const {
  cost_model m;
  const auto ts = tensors(c);
  for (const auto& t : ts) m.bytes_moved += static_cast<double>(t.elements()) * static_cast<double>(size_of(t.type));
  for (const auto& p : problems(c)) m.flops += 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  return m;
}

}  // namespace portbench::reference::detail
