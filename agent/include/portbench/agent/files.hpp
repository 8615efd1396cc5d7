// SPDX-License-Identifier: Apache-2.0
// Small file helpers: an atomic replace (write a temp file beside the target, fsync, rename),
// so a reader (or a resume after kill -9) sees the old or the new file, never half of one;
// and an append-only JSON lines log.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace portbench::agent {

/// Replaces `path` with `text` atomically. Throws agent_error naming the file.
void write_atomic(const std::filesystem::path& path, const std::string& text);
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& doc);
void write_json_atomic(const std::filesystem::path& path, const nlohmann::ordered_json& doc);

/// Reads a whole file; throws agent_error("<file>", "", "cannot read ...") when it cannot.
[[nodiscard]] std::string read_text(const std::filesystem::path& path);
/// Reads a JSON file; throws agent_error naming the file on a parse error.
[[nodiscard]] nlohmann::json read_json(const std::filesystem::path& path);

/// Appends one line (`doc` dumped compact) and fsyncs, so a kill loses no recorded line.
void append_json_line(const std::filesystem::path& path, const nlohmann::json& doc);

/// "2026-12-01T10:02:45Z"
[[nodiscard]] std::string utc_now();

}  // namespace portbench::agent
