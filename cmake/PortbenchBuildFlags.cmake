# SPDX-License-Identifier: Apache-2.0
# Warnings and language level travel through an INTERFACE target, never CMAKE_CXX_FLAGS.
add_library(portbench_build_flags INTERFACE)
add_library(portbench::build_flags ALIAS portbench_build_flags)
target_compile_features(portbench_build_flags INTERFACE cxx_std_20)
target_compile_options(portbench_build_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                       -Wno-missing-field-initializers)
if(PROJECT_IS_TOP_LEVEL AND PORTBENCH_WERROR)
  # GCC 12 at -O3 reports false -Wrestrict positives inside libstdc++ string code; keep them
  # visible as warnings without failing the build.
  target_compile_options(portbench_build_flags INTERFACE -Werror -Wno-error=restrict)
endif()
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
