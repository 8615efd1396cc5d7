// SPDX-License-Identifier: Apache-2.0
// The portbench CLI: everything lives in the library; this only reports what escapes it.
#include <cstdio>
#include <exception>

#include "commands.hpp"

int main(int argc, char** argv) try {
  return portbench::cli::run(argc, argv);
} catch (const std::exception& e) {
  std::fprintf(stderr, "portbench: error: %s\n", e.what());
  return 2;
}
