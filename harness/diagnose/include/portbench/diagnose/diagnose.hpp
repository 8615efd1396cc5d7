// SPDX-License-Identifier: Apache-2.0
// `portbench diagnose`: for the configurations of a results file below the gate (or those
// named), both sides side by side — launch plan and waves, each entry's cubin resources and
// occupancy, the SASS mix, achieved bandwidth and flop rate against the roofs, the ir-diff —
// then ranked findings, each a literal tag with its evidence (docs/diagnose.md).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "portbench/diagnose/bundle_ir.hpp"
#include "portbench/diagnose/resources.hpp"
#include "portbench/diagnose/roofline.hpp"
#include "portbench/diagnose/sass.hpp"
#include "portbench/store/results.hpp"

namespace portbench::diagnose {

struct diagnose_options {
  double gate = 0.95;                         ///< diagnose configurations with port/reference speed below this
  std::string config_regex;                   ///< instead: configurations whose id matches (search)
  std::vector<std::filesystem::path> bundles; ///< --bundles: where to look instead of the run's folders
  double copy_gbps = 0;                       ///< > 0: this copy bandwidth instead of the file's / table's
  bool sass = true;                           ///< disassemble (needs nvdisasm)
  std::string nvdisasm;                       ///< explicit tool path
  sass_options sass_opts;
  /// Disassemble for the slowest this many configurations (0: all); the others take what the
  /// SASS cache holds. nvdisasm costs about 0.4 s of CPU per cubin.
  std::size_t sass_limit = 16;
  double roof_fraction = 0.8;                 ///< BELOW_ROOFLINE under this share of the roof
  double small_ns = 10000;                    ///< below this the port is LAUNCH_BOUND, not measured against the roof
};

struct launch_diagnosis {
  std::string entry, cubin;
  bundle::dim3 grid{1, 1, 1}, block{1, 1, 1}, cluster{1, 1, 1};
  launch_resources resources;
  std::optional<sass_mix> sass;
  std::string sass_note;   ///< why there is no mix
};

struct side_diagnosis {
  std::string role, frontend;
  std::filesystem::path bundle;
  std::string bundle_note;
  double best_ns = 0;
  /// The best run's median time of each kernel of a multi-kernel plan, in launch order (entry,
  /// ns); empty for a plan of one kernel or results without per-kernel times.
  std::vector<std::pair<std::string, std::int64_t>> kernel_median_ns;
  std::vector<launch_diagnosis> launches;
  std::optional<roofline_point> roof;
  bool tensor = false;     ///< its SASS has tensor-core ops (the compute roof is the tensor peak)
  bool tile_ir = false;    ///< every launch has Tile IR text
  std::vector<std::string> rereads;   ///< tensors its Tile IR loads in more than one region
  std::string problem;     ///< why it could not be diagnosed ("" when it was)
};

struct finding_item {
  std::string tag;        ///< finding literal
  double score = 0;       ///< ranking weight (docs/diagnose.md)
  std::string evidence;   ///< both sides' figures
};

struct config_diagnosis {
  std::string id, op;
  double ratio = 0;       ///< port speed / reference speed (best of N)
  side_diagnosis reference, port;
  std::optional<config_ir_diff> ir;
  std::string ir_note;
  std::vector<finding_item> findings;   ///< ranked, highest score first
  std::vector<std::string> notes;
};

struct diagnosis {
  std::string verdict;    ///< diagnose_verdict literal
  std::filesystem::path file;
  std::string suite, gpu_name, reference_frontend, port_frontend, revision;
  run_device device;
  std::string selection;  ///< "below the gate 0.95" or "matching --config X"
  std::size_t configs_in_file = 0, paired = 0;
  std::vector<config_diagnosis> configs;   ///< slowest first
  std::vector<std::string> notes;
  std::string sass_tool;  ///< the disassembler used, or why there was none
};

/// Diagnoses the configurations of `results` that `opts` selects.
[[nodiscard]] diagnosis diagnose_results(const store::results_file& results, const diagnose_options& opts);

/// The findings of one configuration (ranked); `d` gives the device's limits.
[[nodiscard]] std::vector<finding_item> find_findings(const config_diagnosis& c, const device_spec& d,
                                                      const diagnose_options& opts);

[[nodiscard]] std::string render_diagnosis_markdown(const diagnosis& d);
[[nodiscard]] std::string render_diagnosis_json(const diagnosis& d);

}  // namespace portbench::diagnose
