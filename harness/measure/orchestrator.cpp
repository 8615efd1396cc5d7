// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/orchestrator.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "portbench/bundle/error.hpp"
#include "portbench/verdicts.hpp"
#include "portbench/measure/worker.hpp"

extern char** environ;

namespace portbench::measure {
namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

reference::param_value to_value(const json& v) {
  if (v.is_null()) return std::monostate{};
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  throw std::runtime_error("expected null, a boolean, a number or a string");
}

std::string read_tail(const std::filesystem::path& p, std::size_t max_bytes = 600) {
  std::ifstream in(p);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.size() > max_bytes) s = s.substr(s.size() - max_bytes);
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

// One worker process and the pipe it reports on.
class worker_process {
 public:
  worker_process(const std::string& exe, const std::filesystem::path& job_file, const std::filesystem::path& log) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe() failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::string job_arg = job_file.string();
    std::vector<char*> argv = {const_cast<char*>(exe.c_str()), const_cast<char*>("worker"),
                               const_cast<char*>("--job"), job_arg.data(), nullptr};
    int rc = posix_spawn(&m_pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      throw std::runtime_error("cannot start worker " + exe);
    }
    m_fd = fds[0];
  }
  ~worker_process() {
    if (m_pid > 0) kill_and_reap();
    if (m_fd >= 0) ::close(m_fd);
  }
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  /// Next line, or nullopt on end of stream; throws timeout_error after `timeout_s` of silence.
  enum class read_status { line, eof, timeout };
  read_status next_line(double timeout_s, std::string& line) {
    auto deadline = clock_type::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      auto nl = m_buffer.find('\n');
      if (nl != std::string::npos) {
        line = m_buffer.substr(0, nl);
        m_buffer.erase(0, nl + 1);
        return read_status::line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
      if (left <= 0) return read_status::timeout;
      pollfd p{m_fd, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      char buf[65536];
      ssize_t n = ::read(m_fd, buf, sizeof buf);
      if (n <= 0) return read_status::eof;
      m_buffer.append(buf, static_cast<std::size_t>(n));
    }
  }

  /// Waits for exit; returns a description ("exit 3", "signal 11 (SIGSEGV)").
  std::string reap() {
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    m_pid = -1;
    if (WIFEXITED(status)) {
      m_exit_code = WEXITSTATUS(status);
      return "exit " + std::to_string(m_exit_code);
    }
    m_exit_code = -1;
    int sig = WTERMSIG(status);
    return "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  void kill_and_reap() {
    ::kill(m_pid, SIGKILL);
    reap();
  }
  [[nodiscard]] int exit_code() const noexcept { return m_exit_code; }

 private:
  pid_t m_pid = -1;
  int m_fd = -1;
  int m_exit_code = 0;
  std::string m_buffer;
};

item_report failed_item(const planned_pair& p, std::size_t index, std::string_view status, const std::string& error) {
  item_report r;
  r.index = index;
  r.status = status;
  r.error = error;
  r.ref.frontend = p.ref_frontend;
  r.port.frontend = p.port_frontend;
  return r;
}

}  // namespace

suite load_suite(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file + ": cannot open suite (missing file?)");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(file + ": not valid JSON: " + e.what());
  }
  suite s;
  s.name = doc.value("suite", std::filesystem::path(file).stem().string());
  if (!doc.contains("configs") || !doc["configs"].is_array()) throw std::runtime_error(file + ": configs: missing or not an array");
  for (std::size_t i = 0; i < doc["configs"].size(); ++i) {
    const json& c = doc["configs"][i];
    std::string where = file + ": configs[" + std::to_string(i) + "]";
    if (!c.contains("op") || !c["op"].is_string()) throw std::runtime_error(where + ".op: missing or not a string");
    if (!c.contains("params") || !c["params"].is_object()) throw std::runtime_error(where + ".params: missing or not an object");
    suite_entry e;
    e.config.op = c["op"].get<std::string>();
    e.params = c["params"];
    for (const auto& [k, v] : c["params"].items()) {
      try {
        e.config.params[k] = to_value(v);
      } catch (const std::exception& ex) {
        throw std::runtime_error(where + ".params." + k + ": " + ex.what());
      }
    }
    s.entries.push_back(std::move(e));
  }
  return s;
}

sweep_plan plan_sweep(const sweep_options& opt) {
  sweep_plan plan;
  suite s = load_suite(opt.suite_file);
  plan.suite_name = s.name;
  // Load every bundle first (stable addresses), then index them by operator per side.
  std::vector<std::pair<int, std::filesystem::path>> dirs;
  for (const auto& d : opt.ref_dirs) {
    auto found = bundle::find_bundles(d);
    if (found.empty()) throw bundle::bundle_error(d, "no bundle (no manifest.json) below this folder");
    for (auto& f : found) dirs.emplace_back(0, f);
  }
  for (const auto& d : opt.port_dirs) {
    auto found = bundle::find_bundles(d);
    if (found.empty()) throw bundle::bundle_error(d, "no bundle (no manifest.json) below this folder");
    for (auto& f : found) dirs.emplace_back(1, f);
  }
  plan.bundles.reserve(dirs.size());
  for (const auto& [side, dir] : dirs) plan.bundles.push_back(bundle::load_bundle(dir));
  std::map<std::string, const bundle::bundle*> by_op[2];
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    const auto& b = plan.bundles[i];
    auto& slot = by_op[dirs[i].first][b.plan.op];
    if (slot) {
      throw std::runtime_error(std::string(dirs[i].first == 0 ? "--ref" : "--port") + ": two bundles for operator '" +
                               b.plan.op + "': " + slot->dir.string() + " and " + b.dir.string());
    }
    slot = &b;
  }
  std::set<const bundle::bundle*> used;
  for (const auto& e : s.entries) {
    std::string id = e.config.id();
    auto r = by_op[0].find(e.config.op);
    auto p = by_op[1].find(e.config.op);
    if (r == by_op[0].end() || p == by_op[1].end()) {
      plan.unpaired.emplace_back(id, r == by_op[0].end() ? "no reference bundle for the operator" : "no port bundle for the operator");
      continue;
    }
    if (!r->second->plan.find(e.config) || !p->second->plan.find(e.config)) {
      plan.unpaired.emplace_back(id, !r->second->plan.find(e.config) ? "the reference bundle has no plan for it"
                                                                      : "the port bundle has no plan for it");
      continue;
    }
    plan.pairs.push_back({e.config, e.params, r->second->dir.string(), p->second->dir.string(),
                          r->second->plan.frontend, p->second->plan.frontend});
    used.insert(r->second);
    used.insert(p->second);
  }
  plan.bundles_used.assign(used.begin(), used.end());
  return plan;
}

sweep_summary run_sweep(const sweep_options& opt, const sweep_plan& plan, const result_sink& sink, const done_predicate& done) {
  sweep_summary summary;
  auto t0 = clock_type::now();
  std::mutex lock;
  std::size_t total = 0, finished = 0;
  // (run, pair index) work lists, one per device; runs outermost so that the N runs of a
  // configuration are spread over the sweep's wall time.
  std::vector<std::vector<std::pair<int, std::size_t>>> work(opt.devices.size());
  std::size_t next_device = 0;
  for (int run = 0; run < opt.runs; ++run) {
    for (std::size_t i = 0; i < plan.pairs.size(); ++i) {
      if (done && done(plan.pairs[i], run)) continue;
      work[next_device++ % opt.devices.size()].emplace_back(run, i);
      ++total;
    }
  }
  auto tmp = std::filesystem::temp_directory_path() / ("portbench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);

  auto progress = [&]() {
    if (!opt.progress) return;
    double elapsed = std::chrono::duration<double>(clock_type::now() - t0).count();
    double eta = finished ? elapsed / static_cast<double>(finished) * static_cast<double>(total - finished) : 0;
    std::fprintf(stderr, "\r[portbench] %zu/%zu configuration runs  elapsed %4.0fs  left ~%4.0fs   ", finished, total,
                 elapsed, eta);
    std::fflush(stderr);
  };
  auto deliver = [&](const planned_pair& p, int run, const item_report& r) {
    std::lock_guard g(lock);
    sink(p, run, r);
    ++finished;
    ++summary.items_run;
    if (r.status != verdicts::status::ok) ++summary.items_failed;
    summary.timed_device_s += r.timed_device_s;
    progress();
  };

  auto device_loop = [&](std::size_t d) {
    auto& items = work[d];
    std::size_t pos = 0;
    int attempt = 0;
    while (pos < items.size()) {
      // One worker per run index: best of N means N fresh contexts and module loads.
      int run = items[pos].first;
      job j;
      j.device = opt.devices[d];
      j.run = run;
      j.seed = opt.seed;
      j.vary_inputs = opt.vary_inputs;
      j.verified_dir = opt.verified_dir.empty() ? (tmp / "verified").string() : opt.verified_dir;
      j.reference_id = opt.reference_id;
      j.timing = opt.timing;
      std::vector<std::size_t> positions;
      for (std::size_t k = pos; k < items.size() && items[k].first == run; ++k) {
        const planned_pair& p = plan.pairs[items[k].second];
        j.items.push_back({k, p.config.op, p.params, p.ref_bundle, p.port_bundle});
        positions.push_back(k);
      }
      auto base = tmp / ("dev" + std::to_string(j.device) + "-" + std::to_string(attempt++));
      std::filesystem::path job_file = base.string() + ".job.json", log_file = base.string() + ".log";
      std::ofstream(job_file) << to_json(j).dump();
      {
        std::lock_guard g(lock);
        ++summary.workers_started;
      }
      worker_process w(opt.worker_exe, job_file, log_file);
      constexpr std::size_t k_none = static_cast<std::size_t>(-1);
      std::size_t current = k_none;   // the item the worker announced and has not finished
      std::size_t started_here = 0;
      bool hung = false;
      std::string line;
      for (;;) {
        auto st = w.next_line(opt.item_timeout_s, line);
        if (st == worker_process::read_status::timeout) {
          hung = true;
          break;
        }
        if (st == worker_process::read_status::eof) break;
        json msg;
        try {
          msg = json::parse(line);
        } catch (const json::parse_error&) {
          continue;   // not ours (a library printing to stdout); the protocol lines are JSON
        }
        std::string event = msg.value("event", "");
        if (event == "begin") {
          current = msg.at("index").get<std::size_t>();
          ++started_here;
        } else if (event == "result") {
          item_report r = item_report_from_json(msg);
          deliver(plan.pairs[items[r.index].second], run, r);
          pos = std::max(pos, r.index + 1);
          current = k_none;
        }
      }
      std::string how;
      if (hung) {
        w.kill_and_reap();
        how = "no word from the worker for " + std::to_string(static_cast<int>(opt.item_timeout_s)) + " s: killed";
      } else {
        how = w.reap();
      }
      if (current != k_none) {
        const planned_pair& p = plan.pairs[items[current].second];
        std::string why = hung ? how : "worker died (" + how + "): " + read_tail(log_file);
        deliver(p, run, failed_item(p, current, hung ? verdicts::status::hang : verdicts::status::crash, why));
        pos = current + 1;
      } else if (started_here == 0 && pos < items.size() && items[pos].first == run) {
        // The worker could not even start an item (no driver, no CUPTI): every item of this
        // run on this device gets the reason, and the next run tries a fresh worker again.
        std::string why = "worker failed before its first configuration (" + how + "): " + read_tail(log_file);
        while (pos < items.size() && items[pos].first == run) {
          const planned_pair& p = plan.pairs[items[pos].second];
          deliver(p, run, failed_item(p, pos, verdicts::status::error, why));
          ++pos;
        }
      }
    }
  };

  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < opt.devices.size(); ++d) threads.emplace_back(device_loop, d);
  for (auto& t : threads) t.join();
  if (opt.progress) std::fprintf(stderr, "\n");
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  summary.wall_s = std::chrono::duration<double>(clock_type::now() - t0).count();
  return summary;
}

}  // namespace portbench::measure
