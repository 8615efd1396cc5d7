// SPDX-License-Identifier: Apache-2.0
// Finding the bundles a results file was measured with. Provenance names each bundle by role,
// front end, operator and the sha256 of its manifest, and the run's command line names the
// folders (--ref/--port). Folders given with --bundles replace those; relative folders are
// resolved against the current directory. Every such decision is kept as a note, and a bundle
// whose manifest changed since the run is used with a note saying so.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "portbench/bundle/bundle.hpp"
#include "portbench/store/results.hpp"

namespace portbench::diagnose {

struct located_bundle {
  std::filesystem::path dir;
  bundle::manifest manifest;
  std::string manifest_sha256;
  std::string note;   ///< e.g. "manifest changed since the run"
};

class bundle_locator {
 public:
  bundle_locator(const store::provenance& p, const std::vector<std::filesystem::path>& search_dirs);

  /// The bundle of this front end and operator that played `role`, or nullptr (`why` says where
  /// it looked). Throws bundle::bundle_error when a found manifest does not parse.
  const located_bundle* find(const std::string& role, const std::string& frontend, const std::string& op,
                             std::string* why);
  /// The bundle loaded with its cubins (load_bundle's checks); throws bundle::bundle_error.
  const bundle::bundle& load(const located_bundle& b);

  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return m_notes; }
  [[nodiscard]] const std::vector<std::filesystem::path>& roots() const noexcept { return m_roots; }

 private:
  void index(const std::filesystem::path& root);
  const store::provenance& m_prov;
  std::vector<std::filesystem::path> m_roots;
  std::vector<located_bundle> m_found;
  bool m_indexed = false;
  std::vector<std::string> m_notes;
  std::map<std::string, std::unique_ptr<bundle::bundle>> m_loaded;
};

/// The folders after --ref and --port (and --aa's --ref) in a `portbench run` command line.
[[nodiscard]] std::vector<std::string> bundle_dirs_of_command(const std::string& command_line);

}  // namespace portbench::diagnose
