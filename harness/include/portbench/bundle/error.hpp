// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

#include "portbench/error.hpp"

namespace portbench::bundle {

/// Bad input in a bundle: the message is one line naming the file, the field and the problem,
/// e.g. "bundles/x/manifest.json: configs[0].launches[0].grid: expected 3 positive integers".
class bundle_error : public portbench::error {
 public:
  /// `what` may start with the field ("configs[0].grid: expected ..."), as the manifest parser
  /// writes it; the three-part form keeps the field apart.
  bundle_error(const std::string& file, const std::string& what, code_location where = code_location::current())
      : portbench::error(file + ": " + what, {.file = file, .where = where}) {}
  bundle_error(const std::string& file, const std::string& field, const std::string& cause,
               code_location where = code_location::current())
      : portbench::error(input_message(file, field, cause), {.file = file, .field = field, .where = where}) {}
};

}  // namespace portbench::bundle
