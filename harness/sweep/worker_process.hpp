// SPDX-License-Identifier: Apache-2.0
// Private: one child process whose stdout is read line by line with a deadline, stderr going
// to a log file. Killed and reaped when it dies or the object does.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace portbench::sweep::detail {

class worker_process {
 public:
  /// Starts `argv` (argv[0] is the executable); stderr goes to `log`. Throws sweep_error naming
  /// the executable when it cannot be started.
  worker_process(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ~worker_process();
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  enum class read_status { line, eof, timeout };
  /// The next complete line (without '\n'); eof when the child closed stdout; timeout when no
  /// line came within `timeout_s`. A line longer than `max_line` bytes is cut there.
  read_status next_line(double timeout_s, std::string& line);
  /// Bytes the child wrote after its last newline (a half-written line), once at eof.
  [[nodiscard]] const std::string& partial_line() const noexcept { return m_buffer; }

  /// Waits for the child to exit: "exit 3", "signal 11 (Segmentation fault)".
  std::string reap();
  /// SIGKILL, then reap.
  std::string kill_and_reap();

  static constexpr std::size_t max_line = std::size_t{64} << 20;

 private:
  pid_t m_pid = -1;
  int m_fd = -1;
  std::string m_buffer;
};

/// The last `max_bytes` of a file, newlines turned into spaces ("" if unreadable).
[[nodiscard]] std::string read_tail(const std::filesystem::path& p, std::size_t max_bytes = 600);

}  // namespace portbench::sweep::detail
