// SPDX-License-Identifier: Apache-2.0
// Check all or sampled units, in parallel blocks whose boundaries do not depend on the thread
// count; sampled expectations go through the cache.
#include <algorithm>
#include <cmath>

#include "portbench/reference/cache.hpp"
#include "portbench/reference/compare.hpp"
#include "portbench/reference/parallel.hpp"
#include "portbench/reference/tensor_access.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

constexpr std::int64_t max_blocks = 512;

struct slot_target {
  std::string name;
  const host_tensor* got = nullptr;
  tolerance tol;
};

// Compares the segments of consecutive units against the outputs; the scale of an element's
// normalised error is the rms of its (unit, slot) reference values.
void compare_segments(const std::vector<segment>& segs, const std::vector<double>& values,
                      const std::vector<slot_target>& slots, std::vector<error_accumulator>& acc) {
  std::vector<tensor_reader> readers;
  readers.reserve(slots.size());
  for (const auto& s : slots) readers.emplace_back(*s.got);
  std::vector<double> sum2(slots.size());
  std::vector<std::int64_t> cnt(slots.size());
  std::vector<double> got;
  std::size_t i = 0;
  std::int64_t off = 0;
  while (i < segs.size()) {
    // One unit: [i, j)
    std::size_t j = i;
    std::fill(sum2.begin(), sum2.end(), 0.0);
    std::fill(cnt.begin(), cnt.end(), 0);
    std::int64_t o = off;
    while (j < segs.size() && segs[j].unit == segs[i].unit) {
      const auto& s = segs[j];
      const double* w = values.data() + o;
      double acc2 = 0;  // a local: a store into sum2 per element would alias `values`
      for (std::int64_t k = 0; k < s.count; ++k) acc2 += std::isfinite(w[k]) ? w[k] * w[k] : 0.0;
      sum2[static_cast<std::size_t>(s.slot)] += acc2;
      cnt[static_cast<std::size_t>(s.slot)] += s.count;
      o += s.count;
      ++j;
    }
      o = off;
    for (std::size_t q = i; q < j; ++q) {
      const auto& s = segs[q];
      const auto sl = static_cast<std::size_t>(s.slot);
      const double scale = cnt[sl] > 0 ? std::sqrt(sum2[sl] / static_cast<double>(cnt[sl])) : 0.0;
      got.resize(static_cast<std::size_t>(s.count));
      readers[sl].read(s.start, s.stride, s.count, got.data());
      acc[sl].add_span(s.start, s.stride, s.count, got.data(), values.data() + o, scale);
      o += s.count;
    }
    off = o;
    i = j;
  }
}

std::vector<compare_report> not_checked(const std::vector<slot_target>& slots, const std::string& why) {
  std::vector<compare_report> out;
  for (const auto& s : slots) {
    compare_report r;
    r.tensor = s.name;
    r.type = s.got->spec.type;
    r.total = s.got->spec.elements();
    r.atol = s.tol.atol;
    r.rtol = s.tol.rtol;
    r.note = why;
    out.push_back(r);
  }
  return out;
}

}  // namespace

std::optional<std::vector<std::int64_t>> sample_uniform(std::int64_t n, std::int64_t budget, sample_rng& rng) {
  if (n <= budget) return std::nullopt;
  std::vector<std::int64_t> out{0, n - 1};
  while (static_cast<std::int64_t>(out.size()) < budget) out.push_back(rng.below(n));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<compare_report> unit_operator::verify(const config& c, const std::vector<host_tensor>& ts) const {
  return verify(c, ts, verify_options{});
}

tolerance unit_operator::upstream_tolerance(const config& c, const std::string& tensor) const {
  if (const auto t = tolerance_for(c, tensor)) return *t;
  return operator_spec::upstream_tolerance(c, tensor);
}

std::vector<compare_report> unit_operator::verify(const config& c, const std::vector<host_tensor>& ts,
                                                  const verify_options& o) const {
  const unsigned threads = resolve_threads(o.threads);
  std::vector<slot_target> slots;
  for (const auto& name : outputs(c)) slots.push_back({name, &find_tensor(ts, name), upstream_tolerance(c, name)});

  // Operators that overwrite an input need the pristine inputs.
  const bool in_place = std::any_of(ts.begin(), ts.end(), [](const host_tensor& t) {
    return t.spec.role == tensor_role::inout;
  });
  std::vector<host_tensor> regenerated;
  const std::vector<host_tensor>* in = &ts;
  if (in_place) {
    if (o.original_inputs != nullptr) {
      in = o.original_inputs;
    } else if (o.seed) {
      regenerated = make_inputs(*this, c, *o.seed, false);
      in = &regenerated;
    } else {
      return not_checked(slots, name() + " overwrites its input: verify_options.seed or original_inputs is needed");
    }
  }

  const auto job = make_job(c, *in);
  const std::int64_t units = job->units();
  sample_rng rng(stream_key(o.seed.value_or(0), c.id()));
  const auto picked = sample(c, *in, units, rng, o.sample_scale);
  const std::int64_t n = picked ? static_cast<std::int64_t>(picked->size()) : units;
  const auto unit_at = [&](std::int64_t k) { return picked ? (*picked)[static_cast<std::size_t>(k)] : k; };
  const std::string method = picked ? sampled_method() : "all";
  const std::int64_t grain = std::max<std::int64_t>(1, (n + max_blocks - 1) / max_blocks);
  const std::int64_t blocks = block_count(n, grain);

  std::vector<std::vector<error_accumulator>> acc(static_cast<std::size_t>(blocks));
  for (auto& a : acc) {
    for (const auto& s : slots) a.emplace_back(s.got->spec.type, s.tol);
  }

  const bool cacheable = picked && o.cache != nullptr && o.seed.has_value();
  std::shared_ptr<const cache_entry> entry;
  std::string key;
  std::uint64_t fingerprint = 0;
  if (cacheable) {
    key = cache_key(name(), c, *o.seed);
    fingerprint = input_fingerprint(*in);
    entry = o.cache->find(key, fingerprint);
  }

  if (entry) {
    const auto* seg = entry->find("segments");
    const auto* val = entry->find("values");
    if (seg == nullptr || val == nullptr) throw spec_error(name() + ": malformed cache entry " + key);
    std::vector<segment> segs;
    for (std::size_t i = 0; i + 4 < seg->ints.size(); i += 5) {
      segs.push_back({seg->ints[i], seg->ints[i + 1], seg->ints[i + 2], seg->ints[i + 3], seg->ints[i + 4]});
    }
    compare_segments(segs, val->reals, slots, acc[0]);
  } else {
    // Per block: compute its units, compare them; keep the values when they go to the cache.
    std::vector<unit_values> kept(cacheable ? static_cast<std::size_t>(blocks) : 0);
    parallel_blocks(n, grain, threads, [&](std::int64_t b, std::int64_t begin, std::int64_t end) {
      unit_values vals;
      for (std::int64_t k = begin; k < end; ++k) {
        const std::int64_t u = unit_at(k);
        if (!cacheable) vals.clear();  // cached runs keep the whole block for the entry
        vals.set_unit(u);
        job->compute(u, vals);
        if (!cacheable) compare_segments(vals.segments(), vals.values(), slots, acc[static_cast<std::size_t>(b)]);
      }
      if (cacheable) {
        compare_segments(vals.segments(), vals.values(), slots, acc[static_cast<std::size_t>(b)]);
        kept[static_cast<std::size_t>(b)] = std::move(vals);
      }
    });
    if (cacheable) {
      auto e = std::make_shared<cache_entry>();
      e->fingerprint = fingerprint;
      cache_block seg{"segments", {}, {}};
      cache_block val{"values", {}, {}};
      for (const auto& k : kept) {
        for (const auto& s : k.segments()) seg.ints.insert(seg.ints.end(), {s.unit, s.slot, s.start, s.stride, s.count});
        val.reals.insert(val.reals.end(), k.values().begin(), k.values().end());
      }
      e->blocks.push_back(std::move(seg));
      e->blocks.push_back(std::move(val));
      o.cache->store(key, std::move(e));
    }
  }

  std::vector<compare_report> out;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    error_accumulator total(slots[s].got->spec.type, slots[s].tol);
    for (const auto& a : acc) total.merge(a[s]);
    auto r = total.report(slots[s].name, method, slots[s].got->spec.elements());
    if (picked) r.note = std::to_string(n) + " of " + std::to_string(units) + " " + method + " sampled";
    if (entry) r.note += (r.note.empty() ? "" : "; ") + std::string("expected values from the cache");
    out.push_back(std::move(r));
  }
  return out;
}

void unit_operator::write_reference(const config& c, std::vector<host_tensor>& ts, unsigned threads) const {
  const auto names = outputs(c);
  std::vector<host_tensor*> targets;
  for (const auto& nm : names) targets.push_back(&find_tensor(ts, nm));
  const auto job = make_job(c, ts);
  const std::int64_t n = job->units();
  const std::int64_t grain = std::max<std::int64_t>(1, (n + max_blocks - 1) / max_blocks);
  parallel_blocks(n, grain, resolve_threads(threads), [&](std::int64_t, std::int64_t begin, std::int64_t end) {
    unit_values vals;
    for (std::int64_t u = begin; u < end; ++u) {
      vals.clear();
      vals.set_unit(u);
      job->compute(u, vals);
      // The whole unit is computed before any write: in-place operators read what they overwrite.
      std::size_t off = 0;
      for (const auto& s : vals.segments()) {
        host_tensor& t = *targets[static_cast<std::size_t>(s.slot)];
        for (std::int64_t k = 0; k < s.count; ++k) {
          store_element(t.bytes.data(), t.spec.type, s.start + k * s.stride, vals.values()[off + static_cast<std::size_t>(k)]);
        }
        off += static_cast<std::size_t>(s.count);
      }
    }
  });
}

}  // namespace portbench::reference::detail
