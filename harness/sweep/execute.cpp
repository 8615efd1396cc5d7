// SPDX-License-Identifier: Apache-2.0
#include "portbench/sweep/execute.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "portbench/verdicts.hpp"
#include "worker_process.hpp"

namespace portbench::sweep {
namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;
namespace fs = std::filesystem;

// The sweep's scratch folder (job files, worker logs, verified outputs), removed on every way
// out of run_sweep.
class scratch_dir {
 public:
  scratch_dir() {
    static std::atomic<int> counter{0};
    m_path = fs::temp_directory_path() /
             ("portbench-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(m_path);
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  [[nodiscard]] const fs::path& path() const noexcept { return m_path; }

 private:
  fs::path m_path;
};

measure::item_report failed_item(const planned_item& p, std::size_t index, std::string_view status,
                                  const std::string& error) {
  measure::item_report r;
  r.index = index;
  r.status = status;
  r.error = error;
  r.ref.frontend = p.reference.frontend;
  r.port.frontend = p.port.frontend;
  return r;
}

std::string cut(std::string s, std::size_t n) {
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

struct work_unit {
  int run;
  std::size_t item;   // index into plan.items
};

// Everything the device threads share; deliver() serialises the sink.
class sweep_state {
 public:
  sweep_state(const execute_options& opt, const sweep_plan& plan, const result_sink& sink, std::size_t total)
      : m_opt(opt), m_plan(plan), m_sink(sink), m_total(total), m_t0(clock_type::now()) {}

  void deliver(const work_unit& u, const measure::item_report& r) {
    std::lock_guard g(m_lock);
    const planned_item& item = m_plan.items[u.item];
    try {
      m_sink(item, u.run, r);
    } catch (const std::exception& e) {
      note_not_recorded(item, u.run, e.what());
    } catch (...) {
      note_not_recorded(item, u.run, "unknown exception");
    }
    ++m_finished;
    // Runs the budget did not start are neither run nor failed: the closing note counts them.
    if (r.status == verdicts::status::not_run && r.error == budget_reason()) {
      ++m_summary.not_run_budget;
    } else {
      ++m_summary.items_run;
      if (r.status != verdicts::status::ok) ++m_summary.items_failed;
    }
    m_summary.timed_device_s += r.timed_device_s;
    progress();
  }
  /// True once execute_options::budget_s is spent.
  [[nodiscard]] bool over_budget() const {
    return m_opt.budget_s > 0 && std::chrono::duration<double>(clock_type::now() - m_t0).count() >= m_opt.budget_s;
  }
  [[nodiscard]] std::string budget_reason() const {
    char text[96];
    std::snprintf(text, sizeof text, "not started: the sweep's budget of %g s was spent", m_opt.budget_s);
    return text;
  }
  void stray_line(const std::string& line) {
    std::lock_guard g(m_lock);
    if (m_summary.stray_lines++ == 0) m_summary.first_stray_line = cut(line, 200);
  }
  void worker_started() {
    std::lock_guard g(m_lock);
    ++m_summary.workers_started;
  }
  sweep_summary finish() {
    if (m_opt.progress && m_total > 0) std::fprintf(stderr, "\n");
    m_summary.wall_s = std::chrono::duration<double>(clock_type::now() - m_t0).count();
    return m_summary;
  }

 private:
  void note_not_recorded(const planned_item& item, int run, const std::string& why) {
    ++m_summary.items_failed;
    if (m_summary.not_recorded++ == 0) {
      m_summary.first_not_recorded = item.id() + " run " + std::to_string(run) + ": " + why;
    }
  }
  void progress() {
    if (!m_opt.progress) return;
    const double elapsed = std::chrono::duration<double>(clock_type::now() - m_t0).count();
    const double eta = m_finished ? elapsed / static_cast<double>(m_finished) * static_cast<double>(m_total - m_finished) : 0;
    std::fprintf(stderr, "\r[portbench] %zu/%zu configuration runs  elapsed %4.0fs  left ~%4.0fs   ", m_finished,
                 m_total, elapsed, eta);
    std::fflush(stderr);
  }

  const execute_options& m_opt;
  const sweep_plan& m_plan;
  const result_sink& m_sink;
  std::mutex m_lock;
  std::size_t m_total, m_finished = 0;
  clock_type::time_point m_t0;
  sweep_summary m_summary;
};

// Runs the units of one device, one worker per run index; a worker that dies leaves the rest
// of its units to a fresh one.
class device_runner {
 public:
  device_runner(const execute_options& opt, const sweep_plan& plan, sweep_state& state, const fs::path& tmp,
                std::size_t device_slot)
      : m_opt(opt), m_plan(plan), m_state(state), m_tmp(tmp), m_device(opt.devices[device_slot]) {}

  void run(const std::vector<work_unit>& units) {
    std::size_t pos = 0;
    while (pos < units.size()) {
      const int run = units[pos].run;
      std::vector<std::size_t> pending;   // positions in `units` of this run still to deliver
      for (; pos < units.size() && units[pos].run == run; ++pos) pending.push_back(pos);
      run_group(units, pending);
    }
  }

 private:
  // One run index: fresh workers until every pending unit has an outcome. Each round delivers
  // at least one unit, so this ends whatever the workers do.
  void run_group(const std::vector<work_unit>& units, std::vector<std::size_t> pending) {
    int idle_rounds = 0;   // consecutive workers that delivered nothing
    while (!pending.empty()) {
      std::set<std::size_t> delivered;
      if (m_state.over_budget()) {
        for (std::size_t k : pending) {
          deliver(units, k, failed(units, k, verdicts::status::not_run, m_state.budget_reason()), delivered);
        }
        return;
      }
      idle_reason idle;
      try {
        idle = one_worker(units, pending, delivered);
      } catch (const std::exception& e) {
        // A job file that cannot be written, a worker that cannot be started: the rest of the
        // group gets the reason (the next run index tries again).
        for (std::size_t k : pending) {
          if (!delivered.count(k)) deliver(units, k, failed(units, k, verdicts::status::error, e.what()), delivered);
        }
      }
      std::vector<std::size_t> left;
      for (std::size_t k : pending) {
        if (!delivered.count(k)) left.push_back(k);
      }
      if (!left.empty() && left.size() == pending.size()) {
        // The worker ended before starting anything: blame the first unit, and after a second
        // such worker in a row the whole group (no driver, no CUPTI: every worker would fail).
        const bool all = ++idle_rounds >= 2;
        for (std::size_t i = 0; i < (all ? left.size() : 1); ++i) {
          deliver(units, left[i],
                  failed(units, left[i], idle.hung ? verdicts::status::hang : verdicts::status::error, idle.why),
                  delivered);
        }
        left.erase(left.begin(), left.begin() + static_cast<std::ptrdiff_t>(all ? left.size() : 1));
      } else {
        idle_rounds = 0;
      }
      pending = std::move(left);
    }
  }

  struct idle_reason {
    std::string why;
    bool hung = false;
  };

  // Starts one worker for `pending`, delivers what it reports and what happened to the unit it
  // was on when it ended. Returns how it ended, for the caller's message if it delivered nothing.
  idle_reason one_worker(const std::vector<work_unit>& units, const std::vector<std::size_t>& pending,
                         std::set<std::size_t>& delivered) {
    const int run = units[pending.front()].run;
    measure::job j;
    j.mode = m_plan.kind == plan_kind::check ? measure::job_mode::check : measure::job_mode::measure;
    j.device = m_device;
    j.run = run;
    j.seed = m_opt.seed;
    j.vary_inputs = m_opt.vary_inputs;
    j.host_inputs = m_opt.host_inputs;
    j.verified_dir = m_opt.verified_dir.empty() ? (m_tmp / "verified").string() : m_opt.verified_dir;
    j.reference_id = m_opt.reference_id;
    j.timing = m_opt.timing;
    std::set<std::size_t> mine(pending.begin(), pending.end());
    for (std::size_t k : pending) {
      const planned_item& p = m_plan.items[units[k].item];
      j.items.push_back({k, p.config.op, p.params, p.reference.bundle, p.port.bundle, p.reference.variant,
                         p.port.variant});
    }
    const fs::path base = m_tmp / ("dev" + std::to_string(m_device) + "-" + std::to_string(m_attempt++));
    const fs::path job_file = base.string() + ".job.json", log_file = base.string() + ".log";
    {
      std::ofstream out(job_file);
      out << measure::to_json(j).dump();
      if (!out) throw sweep_error(job_file.string(), "", "cannot write the worker's job file");
    }
    detail::worker_process w({m_opt.worker_exe, "worker", "--job", job_file.string()}, log_file);
    m_state.worker_started();

    constexpr std::size_t k_none = static_cast<std::size_t>(-1);
    std::size_t current = k_none;   // announced by "begin", not yet reported
    bool hung = false, stopped = false;
    std::string line;
    // The deadline counts from the last protocol line: a worker that only prints noise hangs.
    auto deadline = clock_type::now() + std::chrono::duration<double>(m_opt.item_timeout_s);
    for (;;) {
      const double left = std::chrono::duration<double>(deadline - clock_type::now()).count();
      auto st = left > 0 ? w.next_line(left, line) : detail::worker_process::read_status::timeout;
      if (st == detail::worker_process::read_status::timeout) {
        hung = true;
        break;
      }
      if (st == detail::worker_process::read_status::eof) break;
      json msg = json::parse(line, nullptr, false);
      if (msg.is_discarded() || !msg.is_object() || !msg.contains("event")) {
        m_state.stray_line(line);   // not ours (a library printing to stdout)
        continue;
      }
      const std::string event = msg["event"].is_string() ? msg["event"].get<std::string>() : "";
      if (event == "begin" || event == "result") {
        deadline = clock_type::now() + std::chrono::duration<double>(m_opt.item_timeout_s);
      }
      if (event == "begin") {
        const auto k = index_of(msg);
        if (!k || !mine.count(*k) || delivered.count(*k)) {
          if (current != k_none) report_bad(units, current, "announced an unknown configuration: " + cut(line, 200), delivered);
          current = k_none;
          continue;
        }
        current = *k;
      } else if (event == "result") {
        measure::item_report r;
        std::string problem;
        try {
          r = measure::item_report_from_json(msg);
          if (!mine.count(r.index) || delivered.count(r.index)) problem = "a report for an unknown configuration";
          if (!verdicts::is_literal(r.status)) problem = "status '" + cut(r.status, 40) + "' is not a verdict literal";
        } catch (const std::exception& e) {
          problem = e.what();
        }
        if (!problem.empty()) {
          if (current != k_none) report_bad(units, current, problem + ": " + cut(line, 200), delivered);
          else m_state.stray_line(line);
          current = k_none;
          continue;
        }
        deliver(units, r.index, r, delivered);
        if (current == r.index) current = k_none;
        if (m_state.over_budget() && delivered.size() < mine.size()) {
          stopped = true;   // the rest go NOT_RUN in run_group; the worker is stopped now
          break;
        }
      } else if (event != "done") {
        m_state.stray_line(line);
      }
    }
    const std::string partial = w.partial_line();
    std::string how = hung || stopped ? w.kill_and_reap() : w.reap();
    if (stopped) return {"stopped: the sweep's budget was spent", false};
    if (current != k_none) {
      std::string why;
      if (hung) {
        why = "no word from the worker for " + std::to_string(static_cast<int>(m_opt.item_timeout_s)) + " s: killed";
      } else {
        why = "worker died (" + how + ")";
        if (!partial.empty()) why += " in the middle of its report line";
        const std::string tail = detail::read_tail(log_file);
        if (!tail.empty()) why += ": " + tail;
      }
      deliver(units, current, failed(units, current, hung ? verdicts::status::hang : verdicts::status::crash, why),
              delivered);
    } else if (hung) {
      how = "silent for " + std::to_string(static_cast<int>(m_opt.item_timeout_s)) + " s between configurations: killed";
    }
    idle_reason idle{"the worker ended before starting it (" + how + ")", hung && current == k_none};
    const std::string tail = detail::read_tail(log_file);
    if (!tail.empty()) idle.why += ": " + tail;
    return idle;
  }

  static std::optional<std::size_t> index_of(const json& msg) {
    auto it = msg.find("index");
    if (it == msg.end() || !it->is_number_unsigned()) return std::nullopt;
    return it->get<std::size_t>();
  }
  measure::item_report failed(const std::vector<work_unit>& units, std::size_t k, std::string_view status,
                              const std::string& why) const {
    return failed_item(m_plan.items[units[k].item], k, status, why);
  }
  void report_bad(const std::vector<work_unit>& units, std::size_t k, const std::string& why,
                  std::set<std::size_t>& delivered) {
    deliver(units, k, failed(units, k, verdicts::status::bad_report, "malformed worker report: " + why), delivered);
  }
  void deliver(const std::vector<work_unit>& units, std::size_t k, const measure::item_report& r,
               std::set<std::size_t>& delivered) {
    if (!delivered.insert(k).second) return;
    m_state.deliver(units[k], r);
  }

  const execute_options& m_opt;
  const sweep_plan& m_plan;
  sweep_state& m_state;
  const fs::path& m_tmp;
  int m_device;
  int m_attempt = 0;
};

}  // namespace

sweep_summary run_sweep(const execute_options& opt, const sweep_plan& plan, const result_sink& sink,
                        const done_predicate& done) {
  if (opt.devices.empty()) throw sweep_error("--devices", "", "no device given");
  if (opt.worker_exe.empty()) throw sweep_error("worker", "", "no worker executable given");
  const int runs = plan.kind == plan_kind::check ? 1 : opt.runs;
  std::vector<std::vector<work_unit>> work(opt.devices.size());
  std::size_t next_device = 0, total = 0;
  for (int run = 0; run < runs; ++run) {
    for (std::size_t i = 0; i < plan.items.size(); ++i) {
      if (done && done(plan.items[i], run)) continue;
      work[next_device++ % opt.devices.size()].push_back({run, i});
      ++total;
    }
  }
  scratch_dir tmp;
  sweep_state state(opt, plan, sink, total);
  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < opt.devices.size(); ++d) {
    threads.emplace_back([&, d]() noexcept {
      // Nothing escapes a device thread (an escape would be std::terminate); deliver() and
      // one_worker() already turn every failure into an outcome, this is the last guard.
      try {
        device_runner(opt, plan, state, tmp.path(), d).run(work[d]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "portbench: device %d: internal error, its remaining configurations are lost: %s\n",
                     opt.devices[d], e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  return state.finish();
}

std::string default_worker_exe() {
  if (const char* env = std::getenv("PORTBENCH_WORKER_EXE"); env && *env) return env;
  std::array<char, 4096> buf{};
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : "portbench";
}

std::vector<device_description> describe_devices(const std::string& worker_exe, const std::vector<int>& devices,
                                                 double timeout_s) {
  scratch_dir tmp;
  std::vector<device_description> out;
  for (int d : devices) {
    const fs::path log = tmp.path() / ("describe" + std::to_string(d) + ".log");
    detail::worker_process w({worker_exe, "worker", "--describe-device", std::to_string(d)}, log);
    std::string line, last;
    bool hung = false;
    json info;
    for (;;) {
      auto st = w.next_line(timeout_s, line);
      if (st == detail::worker_process::read_status::timeout) {
        hung = true;
        break;
      }
      if (st == detail::worker_process::read_status::eof) break;
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.contains("gpu_name")) info = std::move(j);
      else last = line;
    }
    const std::string how = hung ? w.kill_and_reap() : w.reap();
    if (info.is_null()) {
      std::string why = detail::read_tail(log, 400);
      // The worker's own CLI prefix would read twice in the one-line error.
      for (const char* prefix : {"portbench: error: "}) {
        if (why.rfind(prefix, 0) == 0) why.erase(0, std::string(prefix).size());
      }
      if (why.empty()) why = last.empty() ? "the worker said nothing" : cut(last, 300);
      if (hung) why = "no answer within " + std::to_string(static_cast<int>(timeout_s)) + " s";
      throw sweep_error("device " + std::to_string(d), "", "cannot run here: " + why + " (worker " + how + ")");
    }
    out.push_back({d, std::move(info)});
  }
  return out;
}

}  // namespace portbench::sweep
