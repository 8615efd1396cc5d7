// SPDX-License-Identifier: Apache-2.0
#include "portbench/diagnose/bundle_locator.hpp"

#include <fstream>
#include <sstream>

#include "portbench/bundle/error.hpp"
#include "portbench/bundle/sha256.hpp"

namespace portbench::diagnose {
namespace {

namespace fs = std::filesystem;

/// Splits a command line at spaces, honouring single and double quotes.
std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::string cur;
  char quote = 0;
  bool any = false;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote) quote = 0;
      else cur += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      any = true;
    } else if (c == ' ' || c == '\t') {
      if (any || !cur.empty()) words.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) words.push_back(cur);
  return words;
}

std::string file_sha256(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return bundle::sha256_hex(std::as_bytes(std::span(text.data(), text.size())));
}

}  // namespace

std::vector<std::string> bundle_dirs_of_command(const std::string& command_line) {
  std::vector<std::string> dirs;
  auto words = words_of(command_line);
  bool taking = false;
  for (const auto& w : words) {
    if (w.rfind("--", 0) == 0) {
      taking = w == "--ref" || w == "--port";
      auto eq = w.find('=');
      if (eq != std::string::npos && (w.substr(0, eq) == "--ref" || w.substr(0, eq) == "--port")) {
        dirs.push_back(w.substr(eq + 1));
        taking = false;
      }
      continue;
    }
    if (taking) dirs.push_back(w);
  }
  return dirs;
}

bundle_locator::bundle_locator(const store::provenance& p, const std::vector<fs::path>& search_dirs) : m_prov(p) {
  if (!search_dirs.empty()) {
    m_roots = search_dirs;
    std::string list;
    for (const auto& d : search_dirs) list += (list.empty() ? "" : ", ") + d.string();
    m_notes.push_back("bundles searched in --bundles " + list + " (instead of the run's own folders)");
    return;
  }
  auto dirs = bundle_dirs_of_command(p.command_line);
  bool relative = false;
  for (const auto& d : dirs) {
    fs::path path(d);
    relative = relative || path.is_relative();
    m_roots.push_back(path.is_relative() ? fs::current_path() / path : path);
  }
  if (dirs.empty()) {
    m_notes.push_back("the results file's command line names no bundle folders (--ref/--port): pass --bundles DIR");
  } else if (relative) {
    m_notes.push_back("the run's bundle folders are relative paths, resolved against the current directory " +
                      fs::current_path().string() + " (use --bundles DIR if they lie elsewhere)");
  }
}

void bundle_locator::index(const fs::path& root) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  if (fs::exists(root / "manifest.json", ec)) dirs.push_back(root);
  else if (fs::is_directory(root, ec)) dirs = bundle::find_bundles(root);
  for (const auto& dir : dirs) {
    bool known = false;
    for (const auto& f : m_found) known = known || fs::equivalent(f.dir, dir, ec);
    if (known) continue;
    located_bundle b;
    b.dir = dir;
    b.manifest = bundle::parse_manifest(dir / "manifest.json");
    b.manifest_sha256 = file_sha256(dir / "manifest.json");
    m_found.push_back(std::move(b));
  }
}

const located_bundle* bundle_locator::find(const std::string& role, const std::string& frontend, const std::string& op,
                                           std::string* why) {
  if (!m_indexed) {
    for (const auto& r : m_roots) index(r);
    m_indexed = true;
  }
  std::string recorded;
  for (const auto& b : m_prov.bundles) {
    if (b.role == role && b.frontend == frontend && b.op == op) recorded = b.bundle_sha256;
  }
  located_bundle* best = nullptr;
  for (auto& b : m_found) {
    if (b.manifest.frontend != frontend || b.manifest.op != op) continue;
    if (best == nullptr || (!recorded.empty() && b.manifest_sha256 == recorded && best->manifest_sha256 != recorded)) {
      best = &b;
    }
  }
  if (best == nullptr) {
    if (why != nullptr) {
      std::string roots;
      for (const auto& r : m_roots) roots += (roots.empty() ? "" : ", ") + r.string();
      *why = "no " + frontend + " bundle of " + op + " below " + (roots.empty() ? std::string("(no folder)") : roots);
    }
    return nullptr;
  }
  if (best->note.empty()) {
    if (recorded.empty()) {
      best->note = "the results file records no manifest hash for it: cannot tell whether it is the bundle measured";
    } else if (best->manifest_sha256 != recorded) {
      best->note = "manifest changed since the run (recorded sha256 " + recorded.substr(0, 12) + "..., now " +
                   best->manifest_sha256.substr(0, 12) + "...): the cubins may not be those measured";
    } else {
      best->note = "manifest sha256 matches the run";
    }
  }
  return best;
}

const bundle::bundle& bundle_locator::load(const located_bundle& b) {
  auto key = b.dir.string();
  auto it = m_loaded.find(key);
  if (it == m_loaded.end()) it = m_loaded.emplace(key, std::make_unique<bundle::bundle>(bundle::load_bundle(b.dir))).first;
  return *it->second;
}

}  // namespace portbench::diagnose
