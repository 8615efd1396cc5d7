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

# Sanitizers for the `sanitize` preset (ASan + UBSan over the unit and cli tests): every
# portbench target and test links build_flags, so all of portbench's own code is instrumented.
set(PORTBENCH_SANITIZE "" CACHE STRING "Sanitizers to build with, e.g. address,undefined (empty: none)")
if(PORTBENCH_SANITIZE)
  # GCC's flow analysis sees the instrumentation and reports maybe-uninitialized inside
  # libstdc++ (std::regex, std::function) that the plain build does not: keep it a warning.
  target_compile_options(portbench_build_flags INTERFACE -fsanitize=${PORTBENCH_SANITIZE}
                         -fno-omit-frame-pointer -fno-sanitize-recover=all
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-error=maybe-uninitialized>)
  target_link_options(portbench_build_flags INTERFACE -fsanitize=${PORTBENCH_SANITIZE})
endif()
