// SPDX-License-Identifier: Apache-2.0
// posix_spawn (never a shell) into a process group of its own; waitpid with a deadline.
#include "portbench/agent/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "portbench/agent/error.hpp"

namespace portbench::agent {
namespace {

using clock_type = std::chrono::steady_clock;

// RAII for the two posix_spawn descriptors.
struct spawn_setup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  spawn_setup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~spawn_setup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  spawn_setup(const spawn_setup&) = delete;
  spawn_setup& operator=(const spawn_setup&) = delete;
};

bool executable(const std::filesystem::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// Waits for `pid` until `deadline` (or `*interrupt`); true when it was reaped (status in *status).
bool wait_until(pid_t pid, clock_type::time_point deadline, int* status, bool forever,
                const volatile std::sig_atomic_t* interrupt = nullptr) {
  auto pause = std::chrono::milliseconds(2);
  for (;;) {
    pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;   // nothing to wait for (should not happen)
    if (interrupt != nullptr && *interrupt != 0) return false;
    if (!forever && clock_type::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(50)) pause *= 2;
  }
}

}  // namespace

std::string process_result::describe() const {
  if (!spawn_error.empty()) return "cannot start: " + spawn_error;
  std::ostringstream s;
  if (interrupted) {
    s << "interrupted after " << seconds << " s (process group killed)";
  } else if (timed_out) {
    s << "timeout after " << seconds << " s (process group killed)";
  } else if (signal != 0) {
    s << "killed by signal " << signal << " (" << ::strsignal(signal) << ")";
  } else {
    s << "exit " << exit_code;
  }
  return s.str();
}

std::string resolve_program(const std::string& program, const std::map<std::string, std::string>& env) {
  if (program.empty()) throw agent_error("argv[0]", "", "empty program name");
  if (program.find('/') != std::string::npos) {
    if (!executable(program)) throw agent_error(program, "", "not an executable file");
    return program;
  }
  auto it = env.find("PATH");
  std::string path = it == env.end() ? "" : it->second;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    auto candidate = std::filesystem::path(dir) / program;
    if (executable(candidate)) return candidate.string();
  }
  throw agent_error(program, "", "not found in the stage's PATH (" + path + ")");
}

process_result run_process(const process_spec& spec, const started_callback& started) {
  process_result res;
  if (spec.argv.empty()) {
    res.spawn_error = "empty argv";
    return res;
  }
  std::string program;
  try {
    program = resolve_program(spec.argv[0], spec.env);
  } catch (const agent_error& e) {
    res.spawn_error = e.what();
    return res;
  }
  spawn_setup s;
  posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  std::string log = spec.log.empty() ? std::string("/dev/null") : spec.log.string();
  if (!spec.stdout_file.empty()) {
    posix_spawn_file_actions_addopen(&s.actions, 1, spec.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&s.actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  } else {
    posix_spawn_file_actions_addopen(&s.actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&s.actions, 1, 2);
  }
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&s.actions, spec.cwd.c_str());
  // A group of its own (pgid = pid), default signal dispositions and an empty mask, whatever
  // the router inherited.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, sig);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.own_group) flags |= POSIX_SPAWN_SETPGROUP;
  posix_spawnattr_setflags(&s.attr, flags);
  posix_spawnattr_setpgroup(&s.attr, 0);
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setsigdefault(&s.attr, &defaults);

  std::vector<std::string> env_text;
  for (const auto& [key, value] : spec.env) env_text.push_back(key + "=" + value);
  std::vector<char*> envp, argv;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  auto t0 = clock_type::now();
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, program.c_str(), &s.actions, &s.attr, argv.data(), envp.data());
  if (rc != 0) {
    res.spawn_error = program + ": " + std::strerror(rc);
    return res;
  }
  if (started) started(pid);
  auto deadline = t0 + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(spec.timeout_s));
  // The group when it has one of its own, else the process alone.
  pid_t target = spec.own_group ? -pid : pid;
  int status = 0;
  if (!wait_until(pid, deadline, &status, spec.timeout_s <= 0, spec.interrupt)) {
    if (spec.interrupt != nullptr && *spec.interrupt != 0) res.interrupted = true;
    else res.timed_out = true;
    ::kill(target, SIGTERM);
    auto grace = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                         std::chrono::duration<double>(spec.kill_grace_s));
    if (!wait_until(pid, grace, &status, false)) {
      ::kill(target, SIGKILL);
      wait_until(pid, grace, &status, true);
    }
  }
  // Whatever the command left running in its group ends with it.
  if (spec.own_group) ::kill(-pid, SIGKILL);
  res.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (!res.timed_out && !res.interrupted) {
    if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  }
  // posix_spawn reports a failed exec (missing interpreter, bad chdir) as exit 127.
  return res;
}

unsigned long long process_start_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');   // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  // Fields after the name start at 3 (state); the start time is field 22.
  for (int i = 3; i < 22 && rest >> field; ++i) {
  }
  unsigned long long ticks = 0;
  rest >> ticks;
  return ticks;
}

bool kill_stale_group(pid_t pgid, unsigned long long start_ticks) {
  if (pgid <= 1 || start_ticks == 0) return false;
  if (process_start_ticks(pgid) != start_ticks) return false;
  ::kill(-pgid, SIGKILL);
  return true;
}

captured run_captured(const process_spec& spec) {
  process_spec s = spec;
  if (s.stdout_file.empty()) s.stdout_file = s.log.string() + ".stdout";
  captured c;
  c.result = run_process(s);
  std::ifstream in(s.stdout_file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  c.out = text.str();
  return c;
}

}  // namespace portbench::agent
