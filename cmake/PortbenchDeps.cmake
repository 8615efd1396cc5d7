# SPDX-License-Identifier: Apache-2.0
# Dependencies come from Debian packages (setup.sh) and, for CUDA, from the pinned 13.0 wheels
# in .deps/cuda-13.0. Nothing is downloaded at configure time.
find_package(Threads REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(fmt REQUIRED)

# CUDA headers only: libcuda, CUPTI and NVRTC are loaded at run time (dlopen), so everything
# links and the unit tests run on machines without a GPU or a driver.
set(_pb_cuda_candidates "${PORTBENCH_CUDA_ROOT}"
    "${CMAKE_SOURCE_DIR}/.deps/cuda-13.0/nvidia/cu13" "/usr/local/cuda")
set(PORTBENCH_CUDA_INCLUDE_DIRS "")
foreach(root IN LISTS _pb_cuda_candidates)
  if(root AND EXISTS "${root}/include/cuda.h")
    list(APPEND PORTBENCH_CUDA_INCLUDE_DIRS "${root}/include")
    set(PORTBENCH_CUDA_LIBDIR_HINT "${root}/lib")
    # The toolkit layout keeps CUPTI apart from the other headers.
    if(EXISTS "${root}/extras/CUPTI/include/cupti.h")
      list(APPEND PORTBENCH_CUDA_INCLUDE_DIRS "${root}/extras/CUPTI/include")
      set(PORTBENCH_CUDA_LIBDIR_HINT "${root}/lib64")
    endif()
    break()
  endif()
endforeach()
if(NOT PORTBENCH_CUDA_INCLUDE_DIRS)
  message(FATAL_ERROR "portbench: no CUDA 13.0 headers found; run scripts/setup.sh "
                      "or set PORTBENCH_CUDA_ROOT to a folder with include/cuda.h")
endif()
message(STATUS "portbench: CUDA headers from ${PORTBENCH_CUDA_INCLUDE_DIRS}")
add_library(portbench_cuda_headers INTERFACE)
add_library(portbench::cuda_headers ALIAS portbench_cuda_headers)
target_include_directories(portbench_cuda_headers SYSTEM INTERFACE ${PORTBENCH_CUDA_INCLUDE_DIRS})
target_compile_definitions(portbench_cuda_headers INTERFACE
    PORTBENCH_CUDA_LIBDIR_HINT="${PORTBENCH_CUDA_LIBDIR_HINT}")

if(PORTBENCH_ENABLE_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(PORTBENCH_ENABLE_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
