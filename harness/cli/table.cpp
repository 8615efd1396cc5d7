// SPDX-License-Identifier: Apache-2.0
#include "table.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace portbench::cli {
namespace {

std::string text_cell(const nlohmann::json& v, int precision) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float() && precision >= 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", precision, v.get<double>());
    return buf;
  }
  return v.dump();
}

std::string csv_cell(const nlohmann::json& v) {
  std::string s = v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

void add_format_option(CLI::App* cmd, table_format& format) {
  static const std::map<std::string, table_format> names{
      {"text", table_format::text}, {"json", table_format::json}, {"csv", table_format::csv}};
  cmd->add_option("--format", format, "Table format: text, json or csv")
      ->transform(CLI::CheckedTransformer(names, CLI::ignore_case));
}

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json to_json(const table& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : t.rows) {
    nlohmann::json o = nlohmann::json::object();
    for (std::size_t i = 0; i < t.columns.size() && i < row.size(); ++i) o[t.columns[i].name] = row[i];
    out.push_back(std::move(o));
  }
  return out;
}

void print_table(const table& t, table_format format, std::FILE* out) {
  if (format == table_format::json) {
    std::fprintf(out, "%s\n", to_json(t).dump().c_str());
    return;
  }
  if (format == table_format::csv) {
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      std::fprintf(out, "%s%s", i ? "," : "", csv_cell(t.columns[i].name).c_str());
    }
    std::fprintf(out, "\n");
    for (const auto& row : t.rows) {
      for (std::size_t i = 0; i < row.size(); ++i) std::fprintf(out, "%s%s", i ? "," : "", csv_cell(row[i]).c_str());
      std::fprintf(out, "\n");
    }
    return;
  }
  // Text: each column as wide as its widest cell; the last column is not padded.
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width;
  for (const auto& c : t.columns) width.push_back(c.name.size());
  for (const auto& row : t.rows) {
    std::vector<std::string> r;
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      r.push_back(i < row.size() ? text_cell(row[i], t.columns[i].precision) : "");
      width[i] = std::max(width[i], r.back().size());
    }
    cells.push_back(std::move(r));
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) {
      s += r[i];
      if (i + 1 < r.size()) s += std::string(width[i] - r[i].size() + 2, ' ');
    }
    std::fprintf(out, "%s\n", s.c_str());
  };
  std::vector<std::string> head;
  for (const auto& c : t.columns) head.push_back(c.name);
  line(head);
  for (const auto& r : cells) line(r);
}

}  // namespace portbench::cli
