// SPDX-License-Identifier: Apache-2.0
#include "portbench/agent/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "portbench/agent/error.hpp"

namespace portbench::agent {
namespace {

// Writes all of `text` to `fd`, then fsyncs. Throws on any error.
void write_all(int fd, const std::string& text, const std::string& name) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw agent_error(name, "", std::string("cannot write: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) throw agent_error(name, "", std::string("cannot fsync: ") + std::strerror(errno));
}

// Owns a file descriptor.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void write_atomic(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    fd_guard f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (f.fd < 0) throw agent_error(tmp.string(), "", std::string("cannot create: ") + std::strerror(errno));
    write_all(f.fd, text, tmp.string());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw agent_error(path.string(), "", std::string("cannot rename the new version into place: ") + std::strerror(err));
  }
  // The rename itself is durable once the folder is synced.
  fd_guard dir{::open(path.parent_path().empty() ? "." : path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd >= 0) ::fsync(dir.fd);
}

void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& doc) {
  write_atomic(path, doc.dump(2) + "\n");
}

void write_json_atomic(const std::filesystem::path& path, const nlohmann::ordered_json& doc) {
  write_atomic(path, doc.dump(2) + "\n");
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw agent_error(path.string(), "", "cannot read (missing file?)");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::string text = read_text(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {   // parse_error, and out_of_range for a number too large
    throw agent_error(path.string(), "", std::string("not valid JSON: ") + e.what());
  }
}

void append_json_line(const std::filesystem::path& path, const nlohmann::json& doc) {
  fd_guard f{::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)};
  if (f.fd < 0) throw agent_error(path.string(), "", std::string("cannot open: ") + std::strerror(errno));
  write_all(f.fd, doc.dump() + "\n", path.string());
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace portbench::agent
