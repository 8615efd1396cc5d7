// SPDX-License-Identifier: Apache-2.0
#include "portbench/report/plots.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

extern char** environ;

namespace portbench::report {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  auto pos = t.rfind('\n');
  return pos == std::string::npos ? t : t.substr(pos + 1);
}

/// Runs argv with stdout and stderr into `log`; returns the exit status (-1 if not started).
int run_process(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "portbench_plots_XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

}  // namespace

plot_options default_plot_options() {
  plot_options o;
  if (const char* py = std::getenv("PORTBENCH_PYTHON"); py != nullptr && *py != '\0') {
    o.python = py;
  } else if (std::filesystem::exists(PORTBENCH_VENV_PYTHON)) {
    o.python = PORTBENCH_VENV_PYTHON;
  } else {
    o.python = "python3";
  }
  const char* dir = std::getenv("PORTBENCH_SCRIPTS_DIR");
  o.script = std::filesystem::path(dir != nullptr && *dir != '\0' ? dir : PORTBENCH_SCRIPTS_DIR) /
             "plot_report.py";
  return o;
}

plot_result draw_plots(const std::vector<std::filesystem::path>& files, const std::string& report_json,
                       const plot_options& opts) {
  plot_result result;
  if (!std::filesystem::exists(opts.script)) {
    result.error = "plot script not found: " + opts.script.string();
    return result;
  }
  temp_dir dir;
  if (dir.path.empty()) {
    result.error = "cannot create a temporary folder for the plots";
    return result;
  }
  std::ofstream(dir.path / "report.json") << report_json;
  std::vector<std::string> argv{opts.python.string(), opts.script.string(), "--json",
                                (dir.path / "report.json").string(), "--out-dir", dir.path.string()};
  for (const auto& f : files) argv.push_back(f.string());
  int rc = run_process(argv, dir.path / "log.txt");
  if (rc != 0) {
    std::string why = last_line(slurp(dir.path / "log.txt"));
    result.error = rc < 0 ? "cannot start " + opts.python.string()
                          : "plot_report.py exited with " + std::to_string(rc) + (why.empty() ? "" : ": " + why);
    return result;
  }
  auto manifest = nlohmann::json::parse(slurp(dir.path / "plots.json"), nullptr, false);
  if (!manifest.is_array()) {
    result.error = "plot_report.py wrote no plots.json";
    return result;
  }
  for (const auto& entry : manifest) {
    std::string file = entry.value("file", "");
    if (file.empty() || file.find('/') != std::string::npos) continue;
    result.images.push_back({entry.value("title", file), slurp(dir.path / file)});
  }
  return result;
}

}  // namespace portbench::report
