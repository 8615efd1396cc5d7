// SPDX-License-Identifier: Apache-2.0
// Private: runs a tool as a child process (no shell) and captures its output.
#pragma once
#include <string>
#include <vector>

namespace portbench::diagnose {

struct capture_result {
  int rc = -1;       ///< exit status; -1 if it could not start, 128 + signal if killed
  std::string out;
  std::string err;
  [[nodiscard]] std::string last_error_line() const;
};

/// Runs argv (argv[0] a path or a name on PATH); stdout and stderr go through temporary files,
/// so a chatty tool never blocks on a full pipe. Safe to call from several threads.
[[nodiscard]] capture_result run_capture(const std::vector<std::string>& argv);

}  // namespace portbench::diagnose
