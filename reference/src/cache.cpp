// SPDX-License-Identifier: Apache-2.0
// In-memory and on-disk cache of sampled expected values. File layout (little endian, native):
// magic "PBREF1\n", u64 key length, key bytes, u64 fingerprint, u64 block count, then per block
// u64 name length, name, u64 int count, ints, u64 real count, reals.
#include <cstdio>
#include <fstream>

#include "portbench/reference/cache.hpp"
#include "portbench/reference/random.hpp"

namespace portbench::reference {
namespace {

constexpr char magic[] = "PBREF1\n";

void put_u64(std::ostream& o, std::uint64_t v) { o.write(reinterpret_cast<const char*>(&v), sizeof v); }
bool get_u64(std::istream& in, std::uint64_t& v) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&v), sizeof v));
}

bool read_entry(const std::filesystem::path& file, const std::string& key, cache_entry& e) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  char m[sizeof magic - 1];
  if (!in.read(m, sizeof m) || std::string(m, sizeof m) != std::string(magic, sizeof m)) return false;
  std::uint64_t n = 0;
  if (!get_u64(in, n) || n > (1U << 20)) return false;
  std::string k(n, '\0');
  if (!in.read(k.data(), static_cast<std::streamsize>(n)) || k != key) return false;
  std::uint64_t blocks = 0;
  if (!get_u64(in, e.fingerprint) || !get_u64(in, blocks) || blocks > (1U << 20)) return false;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    cache_block blk;
    std::uint64_t len = 0;
    if (!get_u64(in, len) || len > (1U << 16)) return false;
    blk.name.resize(len);
    if (!in.read(blk.name.data(), static_cast<std::streamsize>(len))) return false;
    if (!get_u64(in, len) || len > (1ULL << 34)) return false;
    blk.ints.resize(len);
    if (!in.read(reinterpret_cast<char*>(blk.ints.data()), static_cast<std::streamsize>(len * 8))) return false;
    if (!get_u64(in, len) || len > (1ULL << 34)) return false;
    blk.reals.resize(len);
    if (!in.read(reinterpret_cast<char*>(blk.reals.data()), static_cast<std::streamsize>(len * 8))) return false;
    e.blocks.push_back(std::move(blk));
  }
  return true;
}

void write_entry(const std::filesystem::path& file, const std::string& key, const cache_entry& e) {
  // Write to a temporary name, then rename: a reader never sees half a file.
  const auto tmp = file.string() + ".tmp" + std::to_string(mix64(reinterpret_cast<std::uintptr_t>(&e)) % 100000);
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o) return;
    o.write(magic, sizeof magic - 1);
    put_u64(o, key.size());
    o.write(key.data(), static_cast<std::streamsize>(key.size()));
    put_u64(o, e.fingerprint);
    put_u64(o, e.blocks.size());
    for (const auto& b : e.blocks) {
      put_u64(o, b.name.size());
      o.write(b.name.data(), static_cast<std::streamsize>(b.name.size()));
      put_u64(o, b.ints.size());
      o.write(reinterpret_cast<const char*>(b.ints.data()), static_cast<std::streamsize>(b.ints.size() * 8));
      put_u64(o, b.reals.size());
      o.write(reinterpret_cast<const char*>(b.reals.data()), static_cast<std::streamsize>(b.reals.size() * 8));
    }
    if (!o) return;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace

const cache_block* cache_entry::find(const std::string& name) const {
  for (const auto& b : blocks) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::size_t cache_entry::bytes() const {
  std::size_t n = 0;
  for (const auto& b : blocks) n += b.ints.size() * 8 + b.reals.size() * 8 + b.name.size();
  return n;
}

reference_cache::reference_cache(std::filesystem::path folder) : m_folder(std::move(folder)) {}

std::filesystem::path reference_cache::file_for(const std::string& key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin", static_cast<unsigned long long>(hash_text(key)));
  return m_folder / name;
}

std::shared_ptr<const cache_entry> reference_cache::find(const std::string& key, std::uint64_t fingerprint) {
  {
    const std::lock_guard<std::mutex> lock(m_mutex);
    const auto it = m_entries.find(key);
    if (it != m_entries.end() && it->second->fingerprint == fingerprint) {
      ++m_hits;
      return it->second;
    }
  }
  if (!m_folder.empty()) {
    auto e = std::make_shared<cache_entry>();
    if (read_entry(file_for(key), key, *e) && e->fingerprint == fingerprint) {
      const std::lock_guard<std::mutex> lock(m_mutex);
      m_entries[key] = e;
      ++m_hits;
      return e;
    }
  }
  ++m_misses;
  return nullptr;
}

void reference_cache::store(const std::string& key, std::shared_ptr<const cache_entry> entry) {
  if (!entry) return;
  if (!m_folder.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(m_folder, ec);
    if (!ec) write_entry(file_for(key), key, *entry);
  }
  const std::lock_guard<std::mutex> lock(m_mutex);
  m_entries[key] = std::move(entry);
}

void reference_cache::clear() {
  const std::lock_guard<std::mutex> lock(m_mutex);
  m_entries.clear();
}

std::string cache_key(const std::string& op, const config& c, std::uint64_t seed) {
  return op + "|" + c.id() + "|" + std::to_string(seed);
}

std::uint64_t input_fingerprint(const std::vector<host_tensor>& ts) {
  std::uint64_t h = 0x5EED;
  for (const auto& t : ts) {
    if (t.spec.role == tensor_role::out) continue;
    h = mix64(h ^ hash_text(t.spec.name) ^ t.bytes.size());
    const std::size_t n = t.bytes.size();
    if (n == 0) continue;
    const std::size_t samples = n < 4096 ? n : 4096;
    for (std::size_t s = 0; s < samples; ++s) {
      const std::size_t i = samples == n ? s : static_cast<std::size_t>(mix64(s) % n);
      h = mix64(h ^ (static_cast<std::uint64_t>(t.bytes[i]) << (8 * (s % 8))));
    }
  }
  return h;
}

}  // namespace portbench::reference
