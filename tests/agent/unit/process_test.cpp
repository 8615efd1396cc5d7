// SPDX-License-Identifier: Apache-2.0
// Stage processes: no shell, the given environment only, the working directory, exit codes
// and signals, a timeout that kills the whole group, and the stale-group kill of resume.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "portbench/agent/process.hpp"

namespace portbench::agent {
namespace {

namespace fs = std::filesystem;

class AgentProcess : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("portbench_agent_process_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  process_spec sh(const std::string& script, double timeout = 0) {
    process_spec s;
    s.argv = {"/bin/sh", "-c", script};
    s.env = {{"PATH", "/usr/bin:/bin"}, {"ONLY_THIS", "1"}};
    s.cwd = dir;
    s.log = dir / "log.txt";
    s.timeout_s = timeout;
    return s;
  }
};

TEST_F(AgentProcess, ArgvIsNotInterpretedByAShell) {
  process_spec s;
  s.argv = {"/bin/echo", "$HOME", "a;b", "*"};
  s.env = {{"PATH", "/bin"}};
  s.log = dir / "log.txt";
  auto r = run_process(s);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(read(dir / "log.txt"), "$HOME a;b *\n");
}

TEST_F(AgentProcess, EnvironmentAndWorkingDirectoryAreExactlyGiven) {
  ::setenv("PORTBENCH_PROCESS_TEST_LEAK", "1", 1);
  auto r = run_process(sh("env | sort; pwd"));
  ::unsetenv("PORTBENCH_PROCESS_TEST_LEAK");
  EXPECT_TRUE(r.ok());
  std::string out = read(dir / "log.txt");
  EXPECT_NE(out.find("ONLY_THIS=1"), std::string::npos) << out;
  EXPECT_EQ(out.find("PORTBENCH_PROCESS_TEST_LEAK"), std::string::npos) << out;
  EXPECT_NE(out.find(fs::canonical(dir).string() + "\n"), std::string::npos) << out;
}

TEST_F(AgentProcess, ExitCodesAndSignals) {
  auto r = run_process(sh("exit 7"));
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "exit 7");
  auto k = run_process(sh("kill -9 $$"));
  EXPECT_EQ(k.signal, SIGKILL);
  EXPECT_NE(k.describe().find("killed by signal 9"), std::string::npos);
  process_spec missing;
  missing.argv = {"no-such-program-here"};
  missing.env = {{"PATH", "/usr/bin:/bin"}};
  auto m = run_process(missing);
  EXPECT_FALSE(m.ok());
  EXPECT_NE(m.describe().find("not found in the stage's PATH"), std::string::npos) << m.describe();
}

TEST_F(AgentProcess, TimeoutKillsTheWholeGroup) {
  // The shell starts a background sleep (same group) and waits; the timeout must end both.
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_process(sh("sleep 300 & echo $! > child.pid; wait", 2));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(s, 10);
  pid_t child = std::stoi(read(dir / "child.pid"));
  std::string stat;
  for (int i = 0; i < 100; ++i) {
    stat = read("/proc/" + std::to_string(child) + "/stat");
    if (stat.empty() || stat.find(") Z") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(stat.empty() || stat.find(") Z") != std::string::npos) << stat;
}

TEST_F(AgentProcess, LeftoverBackgroundProcessesEndWithTheCommand) {
  auto r = run_process(sh("sleep 300 & echo $! > child.pid; exit 0"));
  EXPECT_TRUE(r.ok());
  pid_t child = std::stoi(read(dir / "child.pid"));
  std::string stat;
  for (int i = 0; i < 100; ++i) {
    stat = read("/proc/" + std::to_string(child) + "/stat");
    if (stat.empty() || stat.find(") Z") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(stat.empty() || stat.find(") Z") != std::string::npos) << stat;
}

TEST_F(AgentProcess, StaleGroupIsKilledOnlyWhenItIsTheSameProcess) {
  std::atomic<pid_t> started{0};
  std::thread runner([&] { (void)run_process(sh("sleep 30"), [&](pid_t p) { started = p; }); });
  while (started == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  pid_t pid = started;
  unsigned long long ticks = process_start_ticks(pid);
  EXPECT_GT(ticks, 0u);
  EXPECT_FALSE(kill_stale_group(pid, ticks + 1)) << "a different start time is another process";
  EXPECT_TRUE(kill_stale_group(pid, ticks));
  runner.join();   // the sleep ended long before its 30 s
  EXPECT_EQ(process_start_ticks(pid), 0u);
}

}  // namespace
}  // namespace portbench::agent
