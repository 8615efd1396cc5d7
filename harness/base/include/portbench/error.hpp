// SPDX-License-Identifier: Apache-2.0
// The one error base of portbench. Every error type (cuda_error, cupti_error, nvrtc_error,
// bundle_error, store_error, spec_error, suite_error, sweep_error, ...) derives from it, so a
// caller can catch portbench::error and still read what failed: the library's code, the failing
// call, where in portbench it was raised, and which input file and field it is about. what() is
// one line, formatted by the derived type (its format is part of the CLI's contract).
#pragma once
#include <stdexcept>
#include <string>

namespace portbench {

/// Where an error was raised. __builtin_FILE/__builtin_LINE (GCC and Clang) instead of
/// std::source_location, which the Clang 14 of the fuzz preset does not have.
struct code_location {
  const char* file = "";
  int line = 0;

  [[nodiscard]] static constexpr code_location current(const char* file = __builtin_FILE(),
                                                       int line = __builtin_LINE()) noexcept {
    return {file, line};
  }
  /// "error.cpp:41" (the file name without its folders); "" when unknown.
  [[nodiscard]] std::string str() const;
};

/// What an error is about; every field may be empty (0 for code).
struct error_info {
  long long code = 0;        ///< the library's numeric code (CUresult, CUptiResult, nvrtcResult)
  std::string code_name;     ///< e.g. "CUDA_ERROR_ILLEGAL_ADDRESS"
  std::string call;          ///< the failing call as written, e.g. "cuMemAlloc(&p, n)"
  std::string file;          ///< the input it is about: a manifest, a suite, a results file
  std::string field;         ///< the field or JSON path inside that file
  code_location where;       ///< where in portbench it was raised
};

class error : public std::runtime_error {
 public:
  /// `message` is the whole one-line text (newlines are replaced by spaces).
  error(const std::string& message, error_info info);

  [[nodiscard]] long long code() const noexcept { return m_info.code; }
  [[nodiscard]] const std::string& code_name() const noexcept { return m_info.code_name; }
  [[nodiscard]] const std::string& call() const noexcept { return m_info.call; }
  [[nodiscard]] const std::string& file() const noexcept { return m_info.file; }
  [[nodiscard]] const std::string& field() const noexcept { return m_info.field; }
  [[nodiscard]] const code_location& where() const noexcept { return m_info.where; }
  [[nodiscard]] const error_info& info() const noexcept { return m_info; }

 private:
  error_info m_info;
};

/// "<file>: <field>: <cause>", leaving out the empty parts: the CLI's one-line form of bad
/// input (`portbench: error: configs/x.json: configs[3].params: missing`).
[[nodiscard]] std::string input_message(const std::string& file, const std::string& field,
                                        const std::string& cause);

/// Bad input named by file and field; the common case of the derived types' constructors.
class input_error : public error {
 public:
  input_error(const std::string& file, const std::string& field, const std::string& cause,
              code_location where = code_location::current());
};

}  // namespace portbench
