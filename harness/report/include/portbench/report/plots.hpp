// SPDX-License-Identifier: Apache-2.0
// Plots for the HTML report come from scripts/plot_report.py (matplotlib), run as a child
// process on the results files and the report's JSON (so the plotted intervals are exactly the
// table's). A missing Python or matplotlib costs the plots, never the report.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "portbench/report/render.hpp"

namespace portbench::report {

struct plot_options {
  std::filesystem::path python;  ///< interpreter with h5py, pandas, matplotlib
  std::filesystem::path script;  ///< scripts/plot_report.py
};

/// $PORTBENCH_PYTHON, else the project's .venv/bin/python if present, else "python3";
/// $PORTBENCH_SCRIPTS_DIR/plot_report.py, else the source tree's scripts/plot_report.py.
[[nodiscard]] plot_options default_plot_options();

struct plot_result {
  std::vector<plot_image> images;
  std::string error;  ///< non-empty when plotting failed (one line)
};

[[nodiscard]] plot_result draw_plots(const std::vector<std::filesystem::path>& files,
                                     const std::string& report_json, const plot_options& opts);

}  // namespace portbench::report
