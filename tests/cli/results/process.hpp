// SPDX-License-Identifier: Apache-2.0
// Runs a program as a real child process and captures its exit code, stdout and stderr.
#pragma once
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace portbench::testing {

struct process_result {
  int rc = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A fresh folder per test binary run.
inline std::filesystem::path scratch_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("portbench_cli_results_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

inline process_result run_process(const std::vector<std::string>& argv) {
  auto dir = scratch_dir();
  auto out_path = dir / "stdout.txt";
  auto err_path = dir / "stderr.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  process_result r;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

/// `portbench ARGS...`
inline process_result portbench(std::vector<std::string> args) {
  args.insert(args.begin(), PORTBENCH_BIN);
  return run_process(args);
}

/// Number of lines in `text` (a trailing newline does not start a line).
inline int line_count(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n' ? 1 : 0;
  return n + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

}  // namespace portbench::testing
