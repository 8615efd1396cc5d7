// SPDX-License-Identifier: Apache-2.0
#include "process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace portbench::diagnose {
namespace {

/// A temporary file, removed when the object dies.
struct temp_file {
  std::string path;
  int fd = -1;
  temp_file() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "portbench_diag_XXXXXX").string();
    fd = ::mkstemp(tmpl.data());
    if (fd >= 0) path = tmpl;
  }
  ~temp_file() {
    if (fd >= 0) ::close(fd);
    if (!path.empty()) ::unlink(path.c_str());
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  [[nodiscard]] std::string read() const {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

}  // namespace

std::string capture_result::last_error_line() const {
  std::string t = err.empty() ? out : err;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  auto pos = t.rfind('\n');
  return pos == std::string::npos ? t : t.substr(pos + 1);
}

capture_result run_capture(const std::vector<std::string>& argv) {
  capture_result r;
  temp_file out, err;
  if (out.fd < 0 || err.fd < 0 || argv.empty()) return r;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    r.err = "cannot start " + argv[0];
    return r;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return r;
  }
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = out.read();
  r.err = err.read();
  return r;
}

}  // namespace portbench::diagnose
