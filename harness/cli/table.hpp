// SPDX-License-Identifier: Apache-2.0
// The tables of run, check and inspect in three formats: aligned text for people, CSV and JSON
// (an array of objects, one per row) for scripts. Cells are JSON values: numbers stay numbers.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace portbench::cli {

enum class table_format { text, json, csv };

/// Adds `--format text|json|csv` to `cmd`.
void add_format_option(CLI::App* cmd, table_format& format);

struct column {
  std::string name;
  int precision = -1;   ///< digits after the point for numbers in text; -1: as they come
};

struct table {
  std::vector<column> columns;
  std::vector<std::vector<nlohmann::json>> rows;   ///< null prints as "-" (text) or empty (CSV)
};

/// The table as a JSON array of {column: cell} objects.
[[nodiscard]] nlohmann::json to_json(const table& t);
/// Prints text, CSV or the JSON array (one line) to `out`.
void print_table(const table& t, table_format format, std::FILE* out = stdout);
/// A finite number as JSON, NaN and infinities as null.
[[nodiscard]] nlohmann::json number(double v);

}  // namespace portbench::cli
