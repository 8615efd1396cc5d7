// SPDX-License-Identifier: Apache-2.0
// Cubin (CUDA ELF) inspection without a driver: entry symbols, the parameter table of each
// entry (.nv.info.<entry>: EIATTR_KPARAM_INFO, EIATTR_CBANK_PARAM_SIZE), registers, shared
// memory and the target architecture. This is what lets the harness reject a manifest whose
// parameters disagree with its cubin before anything is launched.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace portbench::bundle {

struct cubin_param {
  int ordinal = 0;   ///< position in the kernel's parameter list
  int offset = 0;    ///< byte offset in the parameter buffer
  int size = 0;      ///< bytes
};

struct cubin_entry {
  std::string name;
  std::vector<cubin_param> params;   ///< sorted by ordinal
  int param_bytes = -1;              ///< EIATTR_CBANK_PARAM_SIZE (-1: absent)
  int registers = -1;                ///< EIATTR_REGCOUNT (-1: absent)
  int frame_bytes = 0;               ///< EIATTR_FRAME_SIZE (local memory per thread)
  int min_stack_bytes = 0;           ///< EIATTR_MIN_STACK_SIZE (call stack in local memory)
  int max_registers = -1;            ///< EIATTR_MAXREG_COUNT, the cap ptxas had (-1: absent)
  int barriers = 0;                  ///< EIATTR_NUM_BARRIERS (named CTA barriers)
  int mbarriers = 0;                 ///< EIATTR_NUM_MBARRIERS (shared-memory mbarriers, e.g. TMA)
  std::int64_t static_shared_bytes = 0;   ///< size of .nv.shared.<entry>
  std::array<int, 3> required_block{0, 0, 0};   ///< EIATTR_REQNTID, zeros if absent
  int max_threads = 0;                ///< EIATTR_MAX_THREADS, 0 if absent
  /// Cluster shape compiled into the entry (EIATTR_CTA_PER_CLUSTER), zeros if absent.
  std::array<int, 3> cluster{0, 0, 0};
  /// The launch grid counts clusters (tileiras' `.blocksareclusters`): the driver runs
  /// grid x cluster CTAs, and that is the grid CUPTI reports.
  bool blocks_are_clusters = false;
  /// Compiled from Tile IR (EIATTR_LANGUAGE): launched with block (1,1,1) and no dynamic
  /// shared memory; the CTA shape in .reqntid is the compiler's, not the launcher's.
  bool tile_ir = false;
};

struct cubin_info {
  int sm = 0;                   ///< e.g. 90
  bool arch_specific = false;   ///< the "a" targets (sm_90a), which run only on that exact SM
  int elf_abi_version = 0;
  std::string toolkit;          ///< from .note.nv.tkinfo where present, e.g. "ptxas 13.4.92"
  /// The device runtime's launch entry points, if the cubin links them: its kernels can start
  /// other kernels from the device (dynamic parallelism), work no host launch accounts for.
  std::vector<std::string> device_launch_symbols;
  std::vector<cubin_entry> entries;

  [[nodiscard]] std::string arch() const;   ///< "sm_90" or "sm_90a"
  [[nodiscard]] const cubin_entry* find(const std::string& entry) const noexcept;
};

/// Parses a cubin image; throws bundle_error naming `origin` and what is wrong (not an ELF,
/// not a CUDA ELF, truncated, a section outside the file, a malformed .nv.info record).
[[nodiscard]] cubin_info inspect_cubin(std::span<const std::byte> image, const std::string& origin);

}  // namespace portbench::bundle
