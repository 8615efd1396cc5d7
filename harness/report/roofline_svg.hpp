// SPDX-License-Identifier: Apache-2.0
// Private: the HTML report's roofline view, drawn as inline SVG (no plotting library): per
// operator, every configuration's reference and port on log-log axes of arithmetic intensity
// and achieved flop rate, under the copy-bandwidth, DRAM-peak, FP32 and tensor-core roofs.
#pragma once
#include <string>
#include <vector>

#include "portbench/diagnose/roofline.hpp"
#include "portbench/report/model.hpp"

namespace portbench::report::detail {

/// One side of one configuration placed on the roofline (both sides timed, bytes known).
struct roof_sample {
  const config_row* row = nullptr;
  diagnose::work w;
  diagnose::roofline_point reference, port;
};

/// The configurations of `r` with known bytes; `skipped` gets "id: why" for the others.
[[nodiscard]] std::vector<roof_sample> roof_samples(const report_data& r, const diagnose::device_spec& d,
                                                    std::vector<std::string>& skipped);

/// One <svg> for the samples of operator `op` (those with flops; pure data movement has no
/// place on a flop-rate axis and is left to the table).
[[nodiscard]] std::string roofline_svg(const std::vector<roof_sample>& samples, const std::string& op,
                                       const diagnose::device_spec& d);

}  // namespace portbench::report::detail
