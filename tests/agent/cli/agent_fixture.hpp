// SPDX-License-Identifier: Apache-2.0
// Helpers of the agent CLI tests: a fresh folder per test, a job whose stages are the
// scripted stage (tests/agent/stages/scripted.py) following a plan, and the real `portbench
// agent` as a child process (waited for, or left running to be killed).
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

extern char** environ;

namespace portbench::testing::agent {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline const fs::path k_tests = fs::path(PORTBENCH_SOURCE_DIR) / "tests" / "agent";

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<json> read_lines(const fs::path& p) {
  std::vector<json> out;
  std::istringstream in(read_file(p));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

struct result {
  int rc = -1;
  std::string out, err;
};

/// Starts ARGV with stdout/stderr to files in `dir`; returns the pid.
inline pid_t spawn(const std::vector<std::string>& argv, const fs::path& dir, const std::string& name) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, (dir / (name + ".out")).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (dir / (name + ".err")).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

inline int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Running (a zombie, dead but not yet reaped by an init that may never reap it, is not).
inline bool alive(pid_t pid) {
  if (pid <= 0) return false;
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z' && stat[close + 2] != 'X';
}

/// One test's folder, job and plan.
class agent_test : public ::testing::Test {
 protected:
  fs::path dir, workdir, job_file;
  json job, plan = json::object();
  int m_processes = 0;

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::temp_directory_path() / ("portbench_agent_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir);
    fs::create_directories(dir / "ref");
    workdir = dir / "work";
    job_file = dir / "job.json";
    json scripted = {{"argv", {PORTBENCH_PYTHON3, "{root}/stages/scripted.py", (dir / "plan.json").string()}},
                     {"timeout_s", 60}};
    job = {{"schema", "portbench.agent-job/1"},
           {"name", "test"},
           {"operator", "vector_add"},
           {"root", k_tests.string()},
           {"workdir", workdir.string()},
           {"reference", {{"bundle", (dir / "ref").string()}}},
           {"port", {{"frontend", "test"}}},
           {"configs", {{{"params", {{"n", 1024}, {"dtype", "float32"}}}}, {{"params", {{"n", 4096}, {"dtype", "float32"}}}}}},
           {"stages", {{"analyze", scripted}, {"translate", scripted}, {"ir_diff", scripted}, {"verify", scripted},
                       {"benchmark", scripted}, {"diagnose", scripted}}}};
  }

  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir);
  }

  void write_inputs() {
    std::ofstream(job_file) << job.dump(2);
    std::ofstream(dir / "plan.json") << plan.dump(2);
  }

  result portbench(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {PORTBENCH_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string name = "call" + std::to_string(m_processes++);
    pid_t pid = spawn(argv, dir, name);
    result r;
    r.rc = wait_exit(pid);
    r.out = read_file(dir / (name + ".out"));
    r.err = read_file(dir / (name + ".err"));
    return r;
  }

  result run_job() {
    write_inputs();
    return portbench({"agent", "run", job_file.string()});
  }

  json state() const { return json::parse(read_file(workdir / "state.json")); }
  std::vector<json> events() const { return read_lines(workdir / "events.jsonl"); }
  std::vector<json> stage_calls() const { return read_lines(workdir / "calls.jsonl"); }

  /// "analyze:PASS translate:COMPILED ..." from the state's history.
  std::string trail() const {
    std::string t;
    json s = state();   // the loop below must not iterate a temporary's member
    for (const auto& h : s["history"]) {
      std::string v = h["verdict"].get<std::string>();
      if (!h["fail_class"].get<std::string>().empty()) v += "/" + h["fail_class"].get<std::string>();
      t += (t.empty() ? "" : " ") + h["stage"].get<std::string>() + (h["repair"].get<bool>() ? "(repair)" : "") + ":" +
           (v.empty() ? "-" : v);
    }
    return t;
  }

  std::string end() const {
    json s = state();
    std::string e = s["status"].get<std::string>();
    if (!s["stop"].is_null()) e += " " + s["stop"]["stage"].get<std::string>();
    return e;
  }
  std::string stop_reason() const { return state()["stop"]["reason"].get<std::string>(); }
};

}  // namespace portbench::testing::agent
