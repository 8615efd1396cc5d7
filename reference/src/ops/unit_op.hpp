// SPDX-License-Identifier: Apache-2.0
// Shared verification machinery for operators whose output splits into independent units of
// work (a row, an attention query row, a head's whole sequence, a chunk of elements). An
// operator supplies a job that computes one unit's fp64 reference; this file checks every unit
// (cheap operators) or a seeded sample of units (expensive ones, cached), in parallel, and
// writes full references for tests.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "portbench/reference/random.hpp"
#include "portbench/reference/spec.hpp"

namespace portbench::reference::detail {

/// Output elements start, start + stride, ... (count of them) of output `slot`, from `unit`.
struct segment {
  std::int64_t unit;
  std::int64_t slot;
  std::int64_t start;
  std::int64_t stride;
  std::int64_t count;
};

/// The fp64 values one or more units produced, as segments over the outputs' storage.
class unit_values {
 public:
  void clear() {
    m_segments.clear();
    m_values.clear();
  }
  /// Room for `count` values at storage indices start + k * stride of `slot`.
  double* append(int slot, std::int64_t start, std::int64_t stride, std::int64_t count) {
    m_segments.push_back({m_unit, slot, start, stride, count});
    const std::size_t at = m_values.size();
    m_values.resize(at + static_cast<std::size_t>(count));
    return m_values.data() + at;
  }
  void put(int slot, std::int64_t index, double v) { *append(slot, index, 1, 1) = v; }
  void set_unit(std::int64_t u) { m_unit = u; }

  [[nodiscard]] const std::vector<segment>& segments() const { return m_segments; }
  [[nodiscard]] const std::vector<double>& values() const { return m_values; }
  std::vector<segment>& segments() { return m_segments; }
  std::vector<double>& values() { return m_values; }

 private:
  std::int64_t m_unit = 0;
  std::vector<segment> m_segments;
  std::vector<double> m_values;
};

class unit_job {
 public:
  virtual ~unit_job() = default;
  [[nodiscard]] virtual std::int64_t units() const = 0;
  /// Computes unit `u`'s fp64 reference into `out` (called concurrently from several threads).
  virtual void compute(std::int64_t u, unit_values& out) const = 0;
};

/// Sorted sample of `budget` units of [0, n) (always 0 and n - 1), or nullopt if n <= budget.
[[nodiscard]] std::optional<std::vector<std::int64_t>> sample_uniform(std::int64_t n, std::int64_t budget,
                                                                      sample_rng& rng);

class unit_operator : public operator_spec {
 public:
  [[nodiscard]] std::vector<compare_report> verify(const config& c,
                                                   const std::vector<host_tensor>& ts) const override;
  [[nodiscard]] std::vector<compare_report> verify(const config& c, const std::vector<host_tensor>& ts,
                                                   const verify_options& o) const override;
  void write_reference(const config& c, std::vector<host_tensor>& ts, unsigned threads) const override;
  [[nodiscard]] tolerance upstream_tolerance(const config& c, const std::string& tensor) const override;

 protected:
  /// Output tensors the job writes, in slot order.
  [[nodiscard]] virtual std::vector<std::string> outputs(const config& c) const = 0;
  /// A job that reads its inputs from `in` (the tensors of `c`, inputs filled).
  [[nodiscard]] virtual std::unique_ptr<unit_job> make_job(const config& c,
                                                           const std::vector<host_tensor>& in) const = 0;
  /// The units the check covers: nullopt for all. Sampled checks are cached.
  [[nodiscard]] virtual std::optional<std::vector<std::int64_t>> sample(const config& c, const std::vector<host_tensor>& in,
                                                                        std::int64_t units, sample_rng& rng,
                                                                        double scale) const {
    (void)c, (void)in, (void)units, (void)rng, (void)scale;
    return std::nullopt;
  }
  /// Report method for a sampled check ("rows", "heads", "tokens").
  [[nodiscard]] virtual std::string sampled_method() const { return "rows"; }
  /// Upstream atol/rtol per output; default: dtype defaults.
  [[nodiscard]] virtual std::optional<tolerance> tolerance_for(const config& c, const std::string& tensor) const {
    (void)c, (void)tensor;
    return std::nullopt;
  }
};

}  // namespace portbench::reference::detail
