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
  store::results_file merged = store::read_results(files.front(), ro);
  for (std::size_t i = 1; i < files.size(); ++i) {
    store::results_file next = store::read_results(files[i], ro);
    auto hard = store::hard_conflicts(merged.provenance, next.provenance);
    if (!hard.empty() && !opts.force) {
      std::string why;
      for (const auto& h : hard) why += (why.empty() ? "" : ", ") + h;
      throw store::store_error(files[i], "cannot combine with " + files.front().string() + ": " + why +
                                             " (pass --force to combine anyway)");
    }
    store::merge_summary s = store::merge_into(merged, next, {.force = opts.force});
    if (notes != nullptr) notes->insert(notes->end(), s.notes.begin(), s.notes.end());
  }
  return merged;
}

}  // namespace portbench::report
