// SPDX-License-Identifier: Apache-2.0
#include "portbench/report/output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "portbench/store/error.hpp"
#include "portbench/store/merge.hpp"
#include "portbench/store/reader.hpp"

namespace portbench::report {

void emit(const std::filesystem::path& path, const std::string& content) {
  if (path.empty()) {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) {
    throw std::runtime_error(path.string() + ": cannot write: " + std::strerror(errno));
  }
}

store::results_file load_results(const std::vector<std::filesystem::path>& files,
                                 const load_options& opts, std::vector<std::string>* notes) {
  if (files.empty()) throw std::runtime_error("no results file given");
  store::read_options ro{.samples = opts.samples};
  std::vector<store::results_file> read;
  for (const auto& f : files) read.push_back(store::read_results(f, ro));
  std::vector<const store::results_file*> all;
  for (const auto& r : read) all.push_back(&r);
  const std::string coverage = store::check_shard_coverage(all);
  store::results_file merged = std::move(read.front());
  for (std::size_t i = 1; i < read.size(); ++i) {
    auto hard = store::hard_conflicts(merged.provenance, read[i].provenance);
    if (!hard.empty() && !opts.force) {
      std::string why;
      for (const auto& h : hard) why += (why.empty() ? "" : ", ") + h;
      throw store::store_error(files[i], "cannot combine with " + files.front().string() + ": " + why +
                                             " (pass --force to combine anyway)");
    }
    store::merge_summary s = store::merge_into(merged, read[i], {.force = opts.force});
    if (notes != nullptr) notes->insert(notes->end(), s.notes.begin(), s.notes.end());
  }
  if (!coverage.empty()) {
    // The merged file is the whole plan, no longer one slice of it.
    auto& extra = merged.provenance.extra;
    const std::string slice = extra["shard"];
    extra["merged_shards"] = slice.substr(slice.find('/') + 1);
    extra.erase("shard");
    extra.erase("shard_plan_configs");
    if (notes != nullptr) notes->push_back(coverage);
  }
  return merged;
}

}  // namespace portbench::report
