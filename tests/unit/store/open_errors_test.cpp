// SPDX-License-Identifier: Apache-2.0
// Files that are not portbench results give one-line errors naming the file and the cause.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "portbench/store/error.hpp"
#include "portbench/store/reader.hpp"
#include "portbench/store/writer.hpp"
#include "test_data.hpp"

namespace portbench::store {
namespace {

using testing::temp_file;

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
std::uint64_t get_u64(const std::string& b, std::size_t at) {   // little-endian, as HDF5 writes
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}
void set_u64(std::string& b, std::size_t at, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i) b[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
std::uint64_t collection_size(const std::string& b, std::size_t at) { return get_u64(b, at + 8); }

std::string error_of(const std::filesystem::path& path) {
  try {
    static_cast<void>(read_results(path));
  } catch (const store_error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_one_line_naming(const std::string& msg, const std::filesystem::path& path,
                            const std::string& cause) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind(path.string() + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find(cause), std::string::npos) << msg;
}

TEST(StoreOpenErrors, MissingFile) {
  auto path = temp_file("does_not_exist.h5");
  expect_one_line_naming(error_of(path), path, "no such file");
}

TEST(StoreOpenErrors, NotHdf5) {
  auto path = temp_file("text.h5");
  std::ofstream(path) << "this is not an HDF5 file\n";
  expect_one_line_naming(error_of(path), path, "not an HDF5 file");
}

TEST(StoreOpenErrors, TruncatedFile) {
  auto path = temp_file("truncated.h5");
  {
    auto w = results_writer::create(path, testing::test_provenance());
    w.add_config(testing::test_config(0));
    w.append(testing::test_run(testing::test_config(0), role::reference, 0, 4000, 200));
  }
  auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  std::string msg = error_of(path);
  expect_one_line_naming(msg, path, "cannot open as HDF5: the file is truncated");
}

TEST(StoreOpenErrors, ForeignHdf5) {
  auto path = temp_file("foreign.h5");
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t g = H5Gcreate2(f, "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(g);
  H5Fclose(f);
  expect_one_line_naming(error_of(path), path, "not a portbench results file");
}

TEST(StoreOpenErrors, OtherSchema) {
  auto path = temp_file("schema2.h5");
  provenance p = testing::test_provenance();
  { auto w = results_writer::create(path, p); }
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, H5T_VARIABLE);
  hid_t space = H5Screate(H5S_SCALAR);
  H5Adelete(f, "schema");
  hid_t a = H5Acreate2(f, "schema", str, space, H5P_DEFAULT, H5P_DEFAULT);
  const char* v = "portbench.results/2";
  H5Awrite(a, str, &v);
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(str);
  H5Fclose(f);
  expect_one_line_naming(error_of(path), path, "unsupported results schema 'portbench.results/2'");
}

// HDF5 1.10 copies a global heap object's recorded size without checking it against its
// collection: a corrupt size was an out-of-bounds read/write inside H5Aread (found by
// tests/fuzz/fuzz_results). The reader checks the collections first.
TEST(StoreOpenErrors, CorruptGlobalHeapObjectSize) {
  auto path = temp_file("heap.h5");
  {
    auto w = results_writer::create(path, testing::test_provenance());
    w.add_config(testing::test_config(0));
  }
  ASSERT_NO_THROW(static_cast<void>(read_results(path)));   // the file as written reads
  std::string bytes = read_bytes(path);
  // The first collection's first object (index 1): its 8-byte size sits at byte 16 + 8.
  const auto at = bytes.find("GCOL\x01");
  ASSERT_NE(at, std::string::npos) << "the writer's strings live in a global heap";
  ASSERT_EQ(bytes[at + 16], 1) << "first object is index 1";
  set_u64(bytes, at + 24, 0x2700000009ull);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  expect_one_line_naming(error_of(path), path,
                         "corrupt HDF5 file: global heap collection at byte " + std::to_string(at) + " (" +
                             std::to_string(collection_size(bytes, at)) +
                             " bytes): object at +16 (index 1) claims 167503724553 bytes, past the collection's end");
}

// A free-space object of size 0 kept HDF5's heap decoder in an endless loop (fuzz_results).
TEST(StoreOpenErrors, ZeroSizedGlobalHeapFreeSpace) {
  auto path = temp_file("heap0.h5");
  {
    auto w = results_writer::create(path, testing::test_provenance());
    w.add_config(testing::test_config(0));
  }
  std::string bytes = read_bytes(path);
  const auto at = bytes.find("GCOL\x01");
  ASSERT_NE(at, std::string::npos);
  // Walk the objects to the free space (index 0), as HDF5 does, and zero its size.
  const std::uint64_t end = collection_size(bytes, at);
  std::uint64_t p = 16;
  while (p + 16 <= end && get_u64(bytes, at + p) % 65536 != 0) p += 16 + ((get_u64(bytes, at + p + 8) + 7) / 8) * 8;
  ASSERT_LE(p + 16, end) << "a collection the writer left with free space";
  set_u64(bytes, at + p + 8, 0);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  expect_one_line_naming(error_of(path), path,
                         "corrupt HDF5 file: global heap collection at byte " + std::to_string(at) + " (" +
                             std::to_string(end) + " bytes): object at +" + std::to_string(p) +
                             " is free space of 0 bytes (HDF5 would loop on it forever)");
}

// Every reproducer the fuzzer found is a one-line store_error, never a crash.
TEST(StoreOpenErrors, FuzzReproducersAreOneLineErrors) {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(PORTBENCH_FUZZ_REGRESSIONS "/results")) {
    SCOPED_TRACE(e.path().string());
    const std::string msg = error_of(e.path());
    expect_one_line_naming(msg, e.path(), "");
    EXPECT_NE(msg, "(no error)");
    ++n;
  }
  EXPECT_GT(n, 0u);
}

}  // namespace
}  // namespace portbench::store
