// SPDX-License-Identifier: Apache-2.0
// Files that are not portbench results give one-line errors naming the file and the cause.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <fstream>

#include "portbench/store/error.hpp"
#include "portbench/store/reader.hpp"
#include "portbench/store/writer.hpp"
#include "test_data.hpp"

namespace portbench::store {
namespace {

using testing::temp_file;

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

}  // namespace
}  // namespace portbench::store
