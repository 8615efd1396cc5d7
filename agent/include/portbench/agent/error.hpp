// SPDX-License-Identifier: Apache-2.0
// The agent's one error type: a file (job, stage output, state) and the field or cause, so the
// CLI prints `portbench: error: <file>: <field>: <problem>` in one line.
#pragma once
#include <stdexcept>
#include <string>

namespace portbench::agent {

class agent_error : public std::runtime_error {
 public:
  agent_error(std::string file, std::string field, const std::string& problem)
      : std::runtime_error(file + ": " + (field.empty() ? "" : field + ": ") + problem),
        m_file(std::move(file)), m_field(std::move(field)) {}
  [[nodiscard]] const std::string& file() const noexcept { return m_file; }
  [[nodiscard]] const std::string& field() const noexcept { return m_field; }

 private:
  std::string m_file;
  std::string m_field;
};

}  // namespace portbench::agent
