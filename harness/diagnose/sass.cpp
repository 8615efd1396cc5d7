// SPDX-License-Identifier: Apache-2.0
#include "portbench/diagnose/sass.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "process.hpp"

namespace portbench::diagnose {
namespace {

namespace fs = std::filesystem;

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

std::vector<std::string> split_dots(const std::string& opcode) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= opcode.size(); ++i) {
    if (i == opcode.size() || opcode[i] == '.') {
      parts.push_back(opcode.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

int access_bits(const std::vector<std::string>& parts) {
  int bits = 32;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto& m = parts[i];
    if (m == "U8" || m == "S8") bits = 8;
    else if (m == "U16" || m == "S16") bits = 16;
    else if (m == "64") bits = 64;
    else if (m == "128") bits = 128;
    else if (m == "256") bits = 256;
  }
  return bits;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fnv_hex(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

nlohmann::json to_json(const std::map<std::string, sass_mix>& mixes) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [fn, m] : mixes) {
    nlohmann::json loads = nlohmann::json::object(), stores = nlohmann::json::object();
    for (const auto& [b, n] : m.global_load_bits) loads[std::to_string(b)] = n;
    for (const auto& [b, n] : m.global_store_bits) stores[std::to_string(b)] = n;
    j[fn] = {{"classes", m.classes}, {"load_bits", loads}, {"store_bits", stores}, {"total", m.total}};
  }
  return j;
}

std::map<std::string, sass_mix> from_json(const nlohmann::json& j) {
  std::map<std::string, sass_mix> out;
  for (const auto& [fn, v] : j.items()) {
    sass_mix m;
    m.classes = v.at("classes").get<std::map<std::string, int>>();
    for (const auto& [b, n] : v.at("load_bits").items()) m.global_load_bits[std::stoi(b)] = n.get<int>();
    for (const auto& [b, n] : v.at("store_bits").items()) m.global_store_bits[std::stoi(b)] = n.get<int>();
    m.total = v.at("total").get<int>();
    out[fn] = std::move(m);
  }
  return out;
}

std::string tool_version(const fs::path& tool) {
  auto r = run_capture({tool.string(), "--version"});
  std::istringstream lines(r.out);
  std::string version;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("release") != std::string::npos) version = line;
  }
  return version;
}

}  // namespace

int sass_mix::count(const std::string& cls) const {
  auto it = classes.find(cls);
  return it == classes.end() ? 0 : it->second;
}

static double mean_bits(const std::map<int, int>& widths) {
  double sum = 0, n = 0;
  for (const auto& [b, c] : widths) sum += double(b) * c, n += c;
  return n > 0 ? sum / n : 0;
}

double sass_mix::mean_load_bits() const { return mean_bits(global_load_bits); }
double sass_mix::mean_store_bits() const { return mean_bits(global_store_bits); }

std::string sass_mix::widths_text(bool loads) const {
  const auto& w = loads ? global_load_bits : global_store_bits;
  std::string s;
  for (auto it = w.rbegin(); it != w.rend(); ++it) s += fmt::format("{}{}-bit x{}", s.empty() ? "" : ", ", it->first, it->second);
  return s.empty() ? "none" : s;
}

std::string classify_sass(const std::string& opcode, int* bits) {
  auto parts = split_dots(opcode);
  const std::string& op = parts.front();
  if (op == "LDG" || op == "LDGSTS") {
    if (bits != nullptr) *bits = access_bits(parts);
    return op == "LDG" ? sass_class::global_load : sass_class::global_load_async;
  }
  if (op == "STG") {
    if (bits != nullptr) *bits = access_bits(parts);
    return sass_class::global_store;
  }
  if (op == "ATOM" || op == "ATOMG" || op == "RED" || op == "REDG") return sass_class::global_atomic;
  if (starts_with(op, "UTMA") || starts_with(op, "UBLK")) return sass_class::tma;
  if (op == "LDS" || op == "STS" || op == "LDSM" || op == "STSM" || op == "ATOMS") return sass_class::shared;
  if (op == "LDL" || op == "STL") return sass_class::local;
  if (op.size() >= 3 && op.compare(op.size() - 3, 3, "MMA") == 0) return sass_class::tensor;   // HMMA, HGMMA, UTCHMMA
  if (op == "FFMA" || op == "FFMA2") return sass_class::ffma;
  if (op == "FADD" || op == "FMUL" || op == "FMNMX" || op == "FADD2" || op == "FMUL2") return sass_class::fp32;
  if (op == "HFMA2" || op == "HADD2" || op == "HMUL2" || op == "HMNMX2") return sass_class::half;
  if (op == "MUFU") return sass_class::mufu;
  if (op == "BAR" || op == "SYNCS" || op == "MEMBAR" || op == "WARPSYNC" || op == "ARRIVES") return sass_class::barrier;
  if (op == "SHFL") return sass_class::shuffle;
  return sass_class::other;
}

std::map<std::string, sass_mix> parse_nvdisasm(const std::string& text) {
  std::map<std::string, sass_mix> out;
  sass_mix* cur = nullptr;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    auto first = line.find_first_not_of(" \t");
    bool directive = first != std::string::npos && line.compare(first, 8, ".section") == 0 &&
                     first + 8 < line.size() && (line[first + 8] == ' ' || line[first + 8] == '\t');
    if (directive) {   // ".section .text.<fn>,..." (not ".sectionflags")
      auto t = line.find(".text.", first);
      cur = nullptr;
      if (t != std::string::npos) {
        auto end = line.find_first_of(",\t ", t + 6);
        cur = &out[line.substr(t + 6, end == std::string::npos ? std::string::npos : end - t - 6)];
      }
      continue;
    }
    if (cur == nullptr) continue;
    auto open = line.find("/*");
    if (open == std::string::npos || line.find_first_not_of(" \t") != open) continue;
    auto close = line.find("*/", open);
    if (close == std::string::npos) continue;
    std::istringstream words(line.substr(close + 2));
    std::string opcode;
    words >> opcode;
    if (!opcode.empty() && opcode[0] == '@') words >> opcode;   // a predicate guard
    if (opcode.empty() || opcode == ";" || !std::isupper(static_cast<unsigned char>(opcode[0]))) continue;
    int bits = 0;
    std::string cls = classify_sass(opcode, &bits);
    ++cur->classes[cls];
    ++cur->total;
    if (cls == sass_class::global_load || cls == sass_class::global_load_async) ++cur->global_load_bits[bits];
    if (cls == sass_class::global_store) ++cur->global_store_bits[bits];
  }
  return out;
}

void append_search_order(std::vector<fs::path>& candidates);

std::optional<sass_tool> find_sass_tool(const std::string& explicit_path, std::string* searched) {
  std::vector<fs::path> candidates;
  if (!explicit_path.empty()) {
    candidates.emplace_back(explicit_path);   // asked for this one: no fallback
  } else {
    append_search_order(candidates);
  }
  std::error_code ec;
  std::string tried;
  for (const auto& c : candidates) {
    tried += (tried.empty() ? "" : ", ") + c.string();
    if (!fs::is_regular_file(c, ec) || ::access(c.c_str(), X_OK) != 0) continue;
    sass_tool t{c, tool_version(c)};
    if (!t.version.empty()) return t;
  }
  if (searched != nullptr) *searched = tried;
  return std::nullopt;
}

void append_search_order(std::vector<fs::path>& candidates) {
  if (const char* env = std::getenv("PORTBENCH_NVDISASM"); env != nullptr && *env != '\0') candidates.emplace_back(env);
  fs::path venv = fs::path(PORTBENCH_SOURCE_DIR) / ".venv" / "lib";
  std::error_code ec;
  std::vector<fs::path> pythons;
  for (const auto& e : fs::directory_iterator(venv, ec)) {
    if (e.path().filename().string().rfind("python3", 0) == 0) pythons.push_back(e.path() / "site-packages");
  }
  std::sort(pythons.begin(), pythons.end());
  for (const auto& p : pythons) candidates.push_back(p / "nvidia" / "cu13" / "bin" / "nvdisasm");
  for (const auto& p : pythons) candidates.push_back(p / "triton" / "backends" / "nvidia" / "bin" / "nvdisasm");
  if (const char* path = std::getenv("PATH")) {
    std::string dirs(path);
    for (std::size_t start = 0; start <= dirs.size();) {
      auto colon = dirs.find(':', start);
      if (colon == std::string::npos) colon = dirs.size();
      if (colon > start) candidates.push_back(fs::path(dirs.substr(start, colon - start)) / "nvdisasm");
      start = colon + 1;
    }
  }
  candidates.emplace_back("/usr/local/cuda/bin/nvdisasm");
}

sass_reader::sass_reader(sass_tool tool, sass_options opts) : m_tool(std::move(tool)), m_opts(std::move(opts)) {}

void sass_reader::load(const std::vector<std::pair<std::string, fs::path>>& sha_and_path, bool disassemble) {
  std::string key = fnv_hex(m_tool.version);
  std::vector<std::pair<std::string, fs::path>> todo;
  std::map<std::string, bool> seen;
  for (const auto& [sha, path] : sha_and_path) {
    if (m_mixes.count(sha) || m_errors.count(sha) || seen[sha]) continue;
    if (disassemble) seen[sha] = true;
    if (!m_opts.cache_dir.empty()) {
      fs::path cached = m_opts.cache_dir / (sha + "." + key + ".json");
      auto j = nlohmann::json::parse(slurp(cached), nullptr, false);
      if (j.is_object()) {
        try {
          m_mixes[sha] = from_json(j);
          ++m_cached;
          continue;
        } catch (const std::exception&) {
          // A damaged cache entry: disassemble again below.
        }
      }
    }
    if (disassemble) todo.emplace_back(sha, path);
  }
  if (todo.empty()) return;
  unsigned jobs = m_opts.jobs ? m_opts.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(todo.size()));
  std::vector<capture_result> results(todo.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < jobs; ++w) {
    workers.emplace_back([&] {
      for (std::size_t i = next++; i < todo.size(); i = next++) {
        results[i] = run_capture({m_tool.path.string(), "-c", "-ndf", todo[i].second.string()});
      }
    });
  }
  for (auto& t : workers) t.join();
  std::error_code ec;
  if (!m_opts.cache_dir.empty()) fs::create_directories(m_opts.cache_dir, ec);
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const auto& [sha, path] = todo[i];
    const auto& r = results[i];
    if (r.rc != 0) {
      m_errors[sha] = fmt::format("{} exited {} on {}: {}", m_tool.path.filename().string(), r.rc, path.string(), r.last_error_line());
      continue;
    }
    m_mixes[sha] = parse_nvdisasm(r.out);
    ++m_disassembled;
    if (!m_opts.cache_dir.empty() && !ec) {
      fs::path file = m_opts.cache_dir / (sha + "." + key + ".json");
      fs::path tmp = file;
      tmp += ".tmp" + std::to_string(::getpid());
      std::ofstream(tmp) << to_json(m_mixes[sha]).dump();
      fs::rename(tmp, file, ec);   // a cache that cannot be written only costs time
    }
  }
}

const sass_mix* sass_reader::mix(const std::string& sha256, const std::string& function, std::string* why) const {
  if (auto e = m_errors.find(sha256); e != m_errors.end()) {
    if (why != nullptr) *why = e->second;
    return nullptr;
  }
  auto it = m_mixes.find(sha256);
  if (it == m_mixes.end()) {
    if (why != nullptr) *why = "cubin not disassembled";
    return nullptr;
  }
  auto f = it->second.find(function);
  if (f == it->second.end()) {
    if (why != nullptr) *why = "no .text." + function + " section in the disassembly";
    return nullptr;
  }
  return &f->second;
}

}  // namespace portbench::diagnose
