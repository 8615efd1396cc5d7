// SPDX-License-Identifier: Apache-2.0
// The SASS instruction mix of each entry, by class: global loads and stores by width, TMA,
// shared and local memory, tensor-core ops, FFMA, MUFU, barriers, shuffles. The disassembler is
// the pinned nvdisasm (search order below); each cubin is disassembled once (cached on disk by
// its sha256 and the tool's version) and several at a time, since nvdisasm spends half a second
// starting up whatever the cubin's size.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace portbench::diagnose {

/// Instruction classes (keys of sass_mix::classes).
namespace sass_class {
inline constexpr const char* global_load = "global_load";
inline constexpr const char* global_load_async = "global_load_async";   ///< LDGSTS (to shared)
inline constexpr const char* global_store = "global_store";
inline constexpr const char* global_atomic = "global_atomic";
inline constexpr const char* tma = "tma";
inline constexpr const char* shared = "shared";
inline constexpr const char* local = "local";        ///< LDL/STL: spills and stack
inline constexpr const char* tensor = "tensor";
inline constexpr const char* ffma = "ffma";
inline constexpr const char* fp32 = "fp32";          ///< FADD, FMUL, FMNMX
inline constexpr const char* half = "half";          ///< HFMA2, HADD2, HMUL2
inline constexpr const char* mufu = "mufu";
inline constexpr const char* barrier = "barrier";    ///< BAR, SYNCS (mbarrier), MEMBAR, WARPSYNC
inline constexpr const char* shuffle = "shuffle";
inline constexpr const char* other = "other";
}  // namespace sass_class

struct sass_mix {
  std::map<std::string, int> classes;    ///< class -> static instruction count
  std::map<int, int> global_load_bits;   ///< access width in bits -> LDG/LDGSTS count
  std::map<int, int> global_store_bits;  ///< width -> STG count
  int total = 0;
  [[nodiscard]] int count(const std::string& cls) const;
  /// Mean width of the global loads (stores) in bits, 0 when there are none.
  [[nodiscard]] double mean_load_bits() const;
  [[nodiscard]] double mean_store_bits() const;
  [[nodiscard]] std::string widths_text(bool loads) const;   ///< "128-bit x12, 32-bit x2"
};

/// Class of one SASS opcode with its modifiers ("LDG.E.128.CONSTANT"); `bits` gets the access
/// width of global loads and stores.
[[nodiscard]] std::string classify_sass(const std::string& opcode, int* bits = nullptr);

/// nvdisasm -c output -> per function (".text.<name>" section) mix.
[[nodiscard]] std::map<std::string, sass_mix> parse_nvdisasm(const std::string& text);

struct sass_tool {
  std::filesystem::path path;
  std::string version;   ///< the "release" line of --version
};

/// `explicit_path` (--nvdisasm) if given, and only it; else the search order: $PORTBENCH_NVDISASM, the pinned CUDA 13 wheel in
/// the source tree's .venv (nvidia/cu13/bin), Triton's bundled one in that .venv, nvdisasm on
/// PATH, /usr/local/cuda/bin. nullopt with `searched` listing where it looked.
[[nodiscard]] std::optional<sass_tool> find_sass_tool(const std::string& explicit_path, std::string* searched);

struct sass_options {
  std::filesystem::path cache_dir;   ///< empty: no cache
  unsigned jobs = 0;                 ///< concurrent nvdisasm processes; 0: hardware threads
};

/// Disassembles cubins (by path, deduplicated by sha256) and keeps their mixes.
class sass_reader {
 public:
  sass_reader(sass_tool tool, sass_options opts);
  /// Disassembles every cubin not yet known, several at a time; with `disassemble` false only
  /// what the cache already holds is taken.
  void load(const std::vector<std::pair<std::string, std::filesystem::path>>& sha_and_path, bool disassemble = true);
  /// The mix of `function` in the cubin with this sha256, or nullptr with `why`.
  [[nodiscard]] const sass_mix* mix(const std::string& sha256, const std::string& function, std::string* why) const;
  [[nodiscard]] const sass_tool& tool() const noexcept { return m_tool; }
  [[nodiscard]] int disassembled() const noexcept { return m_disassembled; }
  [[nodiscard]] int cached() const noexcept { return m_cached; }

 private:
  sass_tool m_tool;
  sass_options m_opts;
  std::map<std::string, std::map<std::string, sass_mix>> m_mixes;   // sha256 -> function -> mix
  std::map<std::string, std::string> m_errors;                       // sha256 -> why
  int m_disassembled = 0, m_cached = 0;
};

}  // namespace portbench::diagnose
