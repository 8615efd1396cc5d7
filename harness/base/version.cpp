// SPDX-License-Identifier: Apache-2.0
#include "portbench/build_info.hpp"

std::string_view portbench::version() noexcept { return PORTBENCH_VERSION; }
