#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates harness/cuda/result_names.cpp from a cuda.h (default: .deps/cuda-13.0)."""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
header = Path(sys.argv[1]) if len(sys.argv) > 1 else root / ".deps/cuda-13.0/nvidia/cu13/include/cuda.h"
enum = re.search(r"typedef enum cudaError_enum \{(.*?)\} CUresult;", header.read_text(), re.S)
cases, seen = [], set()
for name, value in re.findall(r"^\s*(CUDA_[A-Z0-9_]+)\s*=\s*(\d+)", enum.group(1), re.M):
    if value not in seen:
        seen.add(value)
        cases.append(f'    case {value}: return "{name}";')
out = ["// SPDX-License-Identifier: Apache-2.0",
       "// CUresult names, generated from the CUDA 13.0 cuda.h by scripts/gen_result_names.py, so",
       "// errors can be named on machines without a driver.",
       '#include "portbench/cuda/error.hpp"', "", "namespace portbench::cuda {", "",
       "const char* result_name(CUresult code) noexcept {", "  switch (static_cast<int>(code)) {",
       *cases, '    default: return "CUDA_ERROR_UNRECOGNIZED";', "  }", "}", "",
       "}  // namespace portbench::cuda", ""]
(root / "harness/cuda/result_names.cpp").write_text("\n".join(out))
