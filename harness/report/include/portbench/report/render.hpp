// SPDX-License-Identifier: Apache-2.0
// Renderers of a report: Markdown (fit for a CI job summary), JSON (every number, for machines)
// and a self-contained HTML page with the plots embedded as PNG data URIs.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "portbench/report/model.hpp"

namespace portbench::report {

struct plot_image {
  std::string title;
  std::string png;  ///< the PNG file's bytes
};

[[nodiscard]] std::string render_markdown(const report_data& report);
[[nodiscard]] std::string render_json(const report_data& report);
/// `plot_note` is shown instead of plots when there are none (e.g. why plotting failed).
[[nodiscard]] std::string render_html(const report_data& report,
                                      const std::vector<plot_image>& plots,
                                      std::string_view plot_note = {});

}  // namespace portbench::report
