// SPDX-License-Identifier: Apache-2.0
#include "heap_check.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

namespace portbench::store::detail {
namespace {

// The layout of a global heap collection (HDF5 file format spec, "Global Heap"), with 8-byte
// lengths as this library's files use: "GCOL", version 1, 3 reserved bytes, the collection's
// size; then objects: index (2 bytes), reference count (2), reserved (4), size (8), the data
// padded to a multiple of 8. Index 0 is the free space at the end, its size counting its header.
constexpr std::array<char, 4> signature = {'G', 'C', 'O', 'L'};
constexpr std::size_t header_size = 16;
constexpr std::size_t object_header_size = 16;

std::uint64_t le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Walks one collection's objects exactly as HDF5 1.10's decoder (H5HG__cache_heap_deserialize)
// does; the cause when that walk would overrun the collection or never end.
std::optional<std::string> check_collection(const std::vector<unsigned char>& c, std::uint64_t at) {
  const std::uint64_t size = c.size();
  const auto where = [&](std::uint64_t p) {
    return "global heap collection at byte " + std::to_string(at) + " (" + std::to_string(size) + " bytes): object at +" +
           std::to_string(p);
  };
  std::uint64_t p = header_size;
  while (p < size) {
    const std::uint64_t rest = size - p;
    if (rest < object_header_size) break;   // a tail too small for a header is free space
    const auto index = le(&c[p], 2);
    const auto object = le(&c[p + 8], 8);
    if (object > rest) {
      return where(p) + " (index " + std::to_string(index) + ") claims " + std::to_string(object) +
             " bytes, past the collection's end";
    }
    // An object's data is padded to 8 bytes after its header; the free space (index 0) counts
    // its header in its size and is not padded.
    const std::uint64_t need = index == 0 ? object : object_header_size + ((object + 7) & ~std::uint64_t{7});
    if (need == 0) return where(p) + " is free space of 0 bytes (HDF5 would loop on it forever)";
    if (need > rest) {
      return where(p) + " (index " + std::to_string(index) + ") claims " + std::to_string(object) +
             " bytes, past the collection's end";
    }
    p += need;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_global_heaps(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;   // HDF5's own open reports what is wrong with the file
  std::error_code ec;
  const std::uint64_t file_size = std::filesystem::file_size(file, ec);
  if (ec) return std::nullopt;
  // Find every signature, chunk by chunk; a chunk keeps the last 3 bytes of the one before so a
  // signature across the boundary is seen.
  constexpr std::size_t chunk = std::size_t{1} << 20;
  std::vector<unsigned char> buf(chunk + 3);
  std::vector<std::uint64_t> found;
  std::uint64_t base = 0;   // file offset of buf[0]
  std::size_t carried = 0;
  while (in) {
    in.read(reinterpret_cast<char*>(buf.data() + carried), static_cast<std::streamsize>(chunk));
    const std::size_t have = carried + static_cast<std::size_t>(in.gcount());
    if (have < signature.size()) break;
    for (std::size_t i = 0; i + signature.size() <= have; ++i) {
      const void* hit = std::memchr(buf.data() + i, 'G', have - signature.size() + 1 - i);
      if (hit == nullptr) break;
      i = static_cast<std::size_t>(static_cast<const unsigned char*>(hit) - buf.data());
      if (std::memcmp(buf.data() + i, signature.data(), signature.size()) == 0) found.push_back(base + i);
    }
    carried = std::min<std::size_t>(signature.size() - 1, have);
    std::memmove(buf.data(), buf.data() + have - carried, carried);
    base += have - carried;
  }
  for (const auto at : found) {
    std::array<unsigned char, header_size> h{};
    in.clear();
    in.seekg(static_cast<std::streamoff>(at));
    if (!in.read(reinterpret_cast<char*>(h.data()), h.size())) continue;
    const auto size = le(&h[8], 8);
    // Only what is a collection header by every field: the bytes "GCOL" inside data are not.
    if (h[4] != 1 || h[5] != 0 || h[6] != 0 || h[7] != 0) continue;
    // HDF5 never writes one smaller than 4096 bytes (H5HG_MINSIZE), but reads what it finds.
    if (size < header_size || at > file_size || size > file_size - at) continue;
    std::vector<unsigned char> c(size);
    in.seekg(static_cast<std::streamoff>(at));
    if (!in.read(reinterpret_cast<char*>(c.data()), static_cast<std::streamsize>(size))) continue;
    if (auto bad = check_collection(c, at)) return bad;
  }
  return std::nullopt;
}

}  // namespace portbench::store::detail
