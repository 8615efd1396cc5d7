// SPDX-License-Identifier: Apache-2.0
#include "worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "portbench/sweep/plan.hpp"

extern char** environ;

namespace portbench::sweep::detail {

using clock_type = std::chrono::steady_clock;

worker_process::worker_process(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw sweep_error(argv.front(), "", std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawn(&m_pid, argv.front().c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    m_pid = -1;
    throw sweep_error(argv.front(), "", std::string("cannot start the worker: ") + std::strerror(rc));
  }
  m_fd = fds[0];
}

worker_process::~worker_process() {
  if (m_pid > 0) kill_and_reap();
  if (m_fd >= 0) ::close(m_fd);
}

worker_process::read_status worker_process::next_line(double timeout_s, std::string& line) {
  const auto deadline = clock_type::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (auto nl = m_buffer.find('\n'); nl != std::string::npos) {
      line.assign(m_buffer, 0, nl);
      m_buffer.erase(0, nl + 1);
      return read_status::line;
    }
    if (m_buffer.size() >= max_line) {   // a flood without newlines: hand over what came
      line.assign(m_buffer, 0, max_line);
      m_buffer.erase(0, max_line);
      return read_status::line;
    }
    if (m_fd < 0) return read_status::eof;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
    if (left <= 0) return read_status::timeout;
    pollfd p{m_fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r <= 0) continue;   // timeout slice or EINTR: check the deadline again
    char buf[65536];
    const ssize_t n = ::read(m_fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      ::close(m_fd);
      m_fd = -1;
      return read_status::eof;
    }
    m_buffer.append(buf, static_cast<std::size_t>(n));
  }
}

std::string worker_process::reap() {
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(m_pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  m_pid = -1;
  if (r < 0) return "lost (waitpid failed)";
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  const int sig = WTERMSIG(status);
  return "signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
}

std::string worker_process::kill_and_reap() {
  ::kill(m_pid, SIGKILL);
  return reap();
}

std::string read_tail(const std::filesystem::path& p, std::size_t max_bytes) {
  std::ifstream in(p, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.size() > max_bytes) s = s.substr(s.size() - max_bytes);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

}  // namespace portbench::sweep::detail
