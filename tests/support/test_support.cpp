// SPDX-License-Identifier: Apache-2.0
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fcntl.h>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

extern char** environ;

namespace portbench::testing {
process_result run_process(const std::vector<std::string>& argv) {
  // stdout and stderr go to temporary files, so a chatty child cannot block on a full pipe.
  temp_dir io;
  std::string out_path = (io.path() / "out").string(), err_path = (io.path() / "err").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  process_result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

std::filesystem::path bundle_root() { return PORTBENCH_BUNDLE_DIR; }

namespace {
// Bundle folders below bundle_root() whose manifest has plans (`with_plans`) or has none, only
// the exporter's reasons for every configuration (an operator it cannot express).
std::vector<std::filesystem::path> bundles_where(bool with_plans) {
  std::vector<std::filesystem::path> found;
  if (std::filesystem::is_directory(bundle_root())) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(bundle_root())) {
      if (e.path().filename() != "manifest.json") continue;
      const auto m = nlohmann::json::parse(read_text(e.path()), nullptr, false);
      const bool plans = m.is_object() && m.contains("configs") && !m["configs"].empty();
      if (plans == with_plans) found.push_back(e.path().parent_path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}
}  // namespace

std::vector<std::filesystem::path> reasons_only_bundles() { return bundles_where(false); }

std::vector<std::filesystem::path> all_bundles() {
  auto found = bundles_where(true);
  EXPECT_FALSE(found.empty()) << "no bundles below " << bundle_root()
                              << ": run scripts/export_bundles.sh (the test command does)";
  return found;
}

temp_dir::temp_dir() {
  std::random_device rd;
  auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto p = base / ("portbench-test-" + std::to_string(rd()));
    if (std::filesystem::create_directory(p)) {
      m_path = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary folder");
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(m_path, ec);
}

std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

void write_bytes(const std::filesystem::path& p, const std::vector<std::byte>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

}  // namespace portbench::testing
