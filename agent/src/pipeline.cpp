// SPDX-License-Identifier: Apache-2.0
// The router's loop. Order of every transition: run the stage, judge its output, apply its
// effects (failing configurations, the port bundle), append the event line, then replace
// state.json; a kill between any two steps resumes by re-running that stage run.
#include "portbench/agent/pipeline.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "portbench/agent/context.hpp"
#include "portbench/agent/error.hpp"
#include "portbench/agent/files.hpp"
#include "portbench/agent/paths.hpp"
#include "portbench/agent/process.hpp"
#include "portbench/agent/routing.hpp"
#include "portbench/agent/schema.hpp"
#include "portbench/agent/verdicts.hpp"

namespace portbench::agent {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// An exclusive lock on WORKDIR/lock for as long as one router works there. The descriptor is
// close-on-exec, so a stage left running by a killed router does not keep the lock.
class workdir_lock {
 public:
  explicit workdir_lock(const fs::path& file) {
    m_fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0) throw agent_error(file.string(), "", std::string("cannot open: ") + std::strerror(errno));
    if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(m_fd);
      throw agent_error(file.string(), "", "another `portbench agent` works in this directory now");
    }
  }
  ~workdir_lock() { ::close(m_fd); }
  workdir_lock(const workdir_lock&) = delete;
  workdir_lock& operator=(const workdir_lock&) = delete;

 private:
  int m_fd = -1;
};

// Entries of a work directory that `run --overwrite` replaces.
const char* const k_pipeline_entries[] = {"state.json", "events.jsonl", "job.json", "suite.json", "configs.json",
                                          "failing.json", "failing-suite.json", "stages", "logs", "analyze",
                                          "translate", "ir_diff", "verify", "benchmark", "diagnose"};

json job_suite(const job& j) {
  json configs = json::array();
  if (!j.suite.empty()) {
    json doc = read_json(j.suite);
    if (!doc.contains("configs") || !doc["configs"].is_array()) throw agent_error(j.suite.string(), "configs", "missing or not an array");
    for (const auto& c : doc["configs"]) {
      if (c.value("op", "") == j.op) configs.push_back(c);
    }
    if (configs.empty()) throw agent_error(j.file.string(), "suite", j.suite.string() + " has no configuration of operator " + j.op);
  } else {
    for (json c : j.configs) {
      c["op"] = j.op;
      configs.push_back(c);
    }
  }
  return {{"suite", j.name}, {"about", "the configurations of agent job " + j.name}, {"configs", configs}};
}

struct router {
  job j;
  workdir_layout w;
  pipeline_state s;
  const pipeline_options& opt;
  config_index index;

  void say(const std::string& line) const {
    if (opt.progress) *opt.progress << line << std::endl;
  }

  void event(json e) const {
    e["utc"] = utc_now();
    append_json_line(w.events(), e);
  }

  void end(const std::string& status, const std::string& stage_name, const std::string& reason) {
    s.status = status;
    s.stop_stage = status == pipeline::stopped ? stage_name : "";
    s.stop_reason = reason;
    s.next.reset();
    event({{"event", "pipeline_end"}, {"status", status}, {"stage", stage_name}, {"reason", reason}});
    save_state(w.root, s);
    say(status == pipeline::complete ? std::string(pipeline::complete) + ": " + reason
                                     : std::string(pipeline::stopped) + " at " + stage_name + ": " + reason);
  }

  pipeline_result result() const { return {s.status, s.stop_stage, s.stop_reason, w.root}; }

  std::vector<std::string> command_for(const pending_run& run, const json& context) const {
    const stage_command& cmd = j.stages.at(run.stage);
    if (!cmd.builtin.empty()) {
      return {opt.portbench, "agent", "stage", cmd.builtin, "--context", context.at("context").get<std::string>()};
    }
    auto argv = expand(cmd.argv, placeholders(context));
    // A relative program path names a file below the job's root, not the work directory.
    if (argv[0].find('/') != std::string::npos && fs::path(argv[0]).is_relative()) argv[0] = (j.root / argv[0]).string();
    return argv;
  }

  void write_failing(const json& failing) {
    write_json_atomic(w.failing(), failing);
    write_json_atomic(w.failing_suite(), failing_suite(failing, index, j.name + "-failing"));
  }

  // What a valid output changes before the next stage runs.
  void apply(const std::string& stage_name, const ojson& doc, int seq) {
    std::string verdict_text = doc.at("verdict").get<std::string>();
    if (stage_name == stage::translate && verdict_text == verdict::compiled) {
      s.port_bundle = resolve_inside(w.root, doc.at("bundle").get<std::string>())->string();
    } else if (stage_name == stage::verify && verdict_text != verdict::blocked) {
      write_failing(failing_from_verify(doc, seq, index));
    } else if (stage_name == stage::benchmark && verdict_text != verdict::blocked) {
      write_failing(failing_from_benchmark(doc, seq, j.gate.min_speed, index));
    } else if (stage_name == stage::diagnose && verdict_text != verdict::blocked) {
      json failing = read_json(w.failing());
      add_findings(failing, doc, seq);
      write_failing(failing);
    }
  }

  static json files_of(const ojson& doc) {
    json files = json::array();
    if (auto it = doc.find("files"); it != doc.end()) {
      for (const auto& f : *it) files.push_back(f.get<std::string>());
    }
    for (const char* key : {"bundle", "results", "baseline"}) {
      if (auto it = doc.find(key); it != doc.end() && it->is_string()) files.push_back(it->get<std::string>());
    }
    return files;
  }

  // One stage run, start to persisted decision. Returns false when interrupted.
  bool step() {
    pending_run run = *s.next;
    int seq = ++s.seq;
    std::string name = workdir_layout::run_name(seq, run.stage);
    json context = make_context(j, w, s, run, seq, j.portbench.empty() ? opt.portbench : j.portbench);
    write_json_atomic(context.at("context").get<std::string>(), context);
    fs::path output = context.at("output").get<std::string>();
    fs::remove(output);
    process_spec spec;
    spec.argv = command_for(run, context);
    spec.env = stage_environment(j, context, opt.environ);
    spec.cwd = w.root;
    spec.log = context.at("log").get<std::string>();
    const stage_command& cmd = j.stages.at(run.stage);
    spec.timeout_s = cmd.timeout_s > 0 ? cmd.timeout_s : j.timeout_s;
    spec.interrupt = opt.interrupt;

    s.current = running_run{run, seq, 0, 0, utc_now()};
    save_state(w.root, s);
    process_result res = run_process(spec, [&](pid_t pid) {
      s.current->pgid = pid;
      s.current->start_ticks = process_start_ticks(pid);
      save_state(w.root, s);
    });
    std::string rel_output = fs::relative(output, w.root).string();
    std::string rel_log = fs::relative(spec.log, w.root).string();
    json e = {{"event", "stage"}, {"seq", seq},           {"stage", run.stage},   {"attempt", run.attempt},
              {"repair", run.repair}, {"argv", spec.argv}, {"started_utc", s.current->started_utc},
              {"duration_s", res.seconds}, {"exit", res.describe()}, {"output", rel_output}, {"log", rel_log}};
    if (res.interrupted) {
      e["verdict"] = nullptr;
      event(e);
      s.next = run;   // the same run, from its start, on resume
      s.current.reset();
      save_state(w.root, s);
      say("[" + name + "] interrupted: " + res.describe());
      return false;
    }
    finished_run fr{seq, run.stage, run.attempt, run.repair, "", "", rel_output, res.describe(), res.seconds};
    if (!run.repair) ++s.runs[run.stage];
    std::string stop_reason, problem;
    decision d;
    json files = json::array();
    if (!res.ok()) {
      fr.verdict = verdict::blocked;
      stop_reason = "the stage run ended with " + res.describe() + " (log: " + rel_log + ")";
    } else {
      ojson doc;
      try {
        doc = read_output(output);
        problem = validate(run.stage, doc, w.root);
      } catch (const agent_error& err) {
        problem = err.what();
      }
      if (!problem.empty()) {
        fr.outcome = "invalid: " + problem;
        if (run.repair) {
          fr.verdict = verdict::blocked;
          stop_reason = "output invalid after its one repair: " + problem;
        }
      } else {
        fr.verdict = doc.at("verdict").get<std::string>();
        fr.fail_class = doc.value("fail_class", "");
        files = files_of(doc);
        apply(run.stage, doc, seq);
        s.last_output[run.stage] = rel_output;
        d = decide(run.stage, fr.verdict, fr.fail_class, s.runs);
        // A stop says the stage's own reason too.
        if (d.next.empty() && doc.contains("reason") && doc["reason"].is_string() && d.stage == run.stage) {
          d.reason += " (" + doc["reason"].get<std::string>() + ")";
        }
      }
    }
    files.push_back(rel_log);
    if (fs::exists(output)) files.push_back(rel_output);
    e["verdict"] = fr.verdict.empty() ? json(nullptr) : json(fr.verdict);
    e["fail_class"] = fr.fail_class;
    e["valid"] = problem.empty() && res.ok();
    e["problem"] = problem;
    e["files"] = files;
    s.history.push_back(fr);
    s.current.reset();

    std::ostringstream line;
    line << "[" << name << "] attempt " << run.attempt << (run.repair ? " (repair)" : "") << ": "
         << (fr.verdict.empty() ? "invalid output" : fr.verdict) << (fr.fail_class.empty() ? "" : " (" + fr.fail_class + ")")
         << " in " << std::fixed << std::setprecision(1) << res.seconds << " s";
    if (!stop_reason.empty()) {
      e["next"] = pipeline::stopped;
      event(e);
      say(line.str());
      end(std::string(pipeline::stopped), run.stage, stop_reason);
      return true;
    }
    if (!problem.empty()) {
      e["next"] = run.stage + " (repair)";
      event(e);
      s.next = pending_run{run.stage, run.attempt, true, problem};
      save_state(w.root, s);
      say(line.str() + " -> repair: " + problem);
      return true;
    }
    e["next"] = d.next.empty() ? d.end : d.next;
    e["reason"] = d.reason;
    event(e);
    say(line.str() + " -> " + (d.next.empty() ? d.end : d.next));
    if (d.next.empty()) {
      end(d.end, d.stage, d.reason);
      return true;
    }
    s.next = pending_run{d.next, s.runs[d.next] + 1, false, ""};
    save_state(w.root, s);
    return true;
  }

  pipeline_result drive() {
    while (s.status == pipeline::running && s.next) {
      if (!step()) break;
    }
    return result();
  }
};

void remove_pipeline_files(const fs::path& dir) {
  for (const char* entry : k_pipeline_entries) fs::remove_all(dir / entry);
}

}  // namespace

pipeline_result run_pipeline(const job& j, const pipeline_options& opt) {
  workdir_layout w{j.workdir};
  fs::create_directories(w.root);
  workdir_lock lock(w.lock());
  if (fs::exists(state_file(w.root))) {
    if (!opt.overwrite) {
      throw agent_error(w.root.string(), "",
                        "holds a pipeline already (`portbench agent resume " + w.root.string() +
                            "` continues it; --overwrite starts afresh)");
    }
    remove_pipeline_files(w.root);
  }
  fs::create_directories(w.stages());
  fs::create_directories(w.logs());
  write_json_atomic(w.job(), to_json(j));
  json suite = job_suite(j);
  write_json_atomic(w.suite(), suite);
  config_index index = opt.load_suite(w.suite());
  for (std::size_t i = 0; i < index.size() && i < suite["configs"].size(); ++i) index[i].suite_entry = suite["configs"][i];
  write_json_atomic(w.configs(), to_json(index));

  router r{j, w, {}, opt, index};
  r.write_failing(empty_failing());
  r.s.status = pipeline::running;
  r.s.port_bundle = j.port_bundle.string();
  r.s.created_utc = utc_now();
  r.s.next = pending_run{std::string(first_stage()), 1, false, ""};
  r.event({{"event", "pipeline_start"}, {"job", j.file.string()}, {"workdir", w.root.string()},
           {"configs", index.size()}});
  save_state(w.root, r.s);
  r.say("agent job " + j.name + ": " + std::to_string(index.size()) + " configurations of " + j.op + ", work directory " +
        w.root.string());
  return r.drive();
}

pipeline_result resume_pipeline(const fs::path& workdir, const pipeline_options& opt) {
  workdir_layout w{fs::absolute(workdir).lexically_normal()};
  if (!fs::exists(state_file(w.root))) (void)load_state(w.root);   // throws the one-line error
  workdir_lock lock(w.lock());
  pipeline_state s = load_state(w.root);
  job j = job_from_json(read_json(w.job()), w.job());
  j.workdir = w.root;
  router r{j, w, s, opt, config_index_from_json(read_json(w.configs()))};
  if (s.status != pipeline::running) {
    r.say(s.status + (s.stop_stage.empty() ? "" : " at " + s.stop_stage) + ": " + s.stop_reason + " (nothing to resume)");
    return r.result();
  }
  if (r.s.current) {
    // The run a kill interrupted: end what it left running, then do it again from its start.
    const auto& c = *r.s.current;
    bool killed = kill_stale_group(c.pgid, c.start_ticks);
    r.event({{"event", "interrupted"}, {"seq", c.seq}, {"stage", c.run.stage}, {"attempt", c.run.attempt},
             {"stale_process_group", c.pgid}, {"killed", killed}});
    r.say("[" + workdir_layout::run_name(c.seq, c.run.stage) + "] was interrupted" +
          (killed ? " (its process group, still running, was killed)" : "") + "; running it again");
    r.s.next = c.run;
    r.s.current.reset();
    save_state(w.root, r.s);
  }
  r.event({{"event", "resume"}, {"next", r.s.next ? r.s.next->stage : ""}});
  return r.drive();
}

std::string describe_state(const pipeline_state& s) {
  std::ostringstream out;
  out << std::left << std::setw(5) << "seq" << std::setw(11) << "stage" << std::setw(8) << "attempt" << std::setw(17)
      << "verdict" << std::setw(9) << "seconds" << "outcome\n";
  for (const auto& h : s.history) {
    std::string verdict_text = h.verdict.empty() ? "-" : h.verdict;
    if (!h.fail_class.empty()) verdict_text += " (" + h.fail_class + ")";
    out << std::setw(5) << h.seq << std::setw(11) << h.stage
        << std::setw(8) << (std::to_string(h.attempt) + (h.repair ? "r" : "")) << std::setw(17) << verdict_text
        << std::setw(9) << std::fixed << std::setprecision(1) << h.seconds << h.outcome << "\n";
  }
  out << "runs:";
  for (const auto& [stage_name, n] : s.runs) out << " " << stage_name << " " << n << "/" << cap_of(stage_name);
  out << "\n";
  if (s.status == pipeline::running) {
    if (s.current) {
      out << "RUNNING: " << s.current->run.stage << " (run " << s.current->seq << ", started " << s.current->started_utc
          << "; if no `portbench agent` runs now, `portbench agent resume` runs it again)\n";
    } else {
      out << "RUNNING: next " << (s.next ? s.next->stage : "?") << "\n";
    }
  } else if (s.status == pipeline::stopped) {
    out << s.status << " at " << s.stop_stage << ": " << s.stop_reason << "\n";
  } else {
    out << s.status << ": " << s.stop_reason << "\n";
  }
  if (!s.port_bundle.empty()) out << "port bundle: " << s.port_bundle << "\n";
  return out.str();
}

}  // namespace portbench::agent
