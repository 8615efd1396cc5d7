// SPDX-License-Identifier: Apache-2.0
// A writer killed mid-run (here: a child that _exit()s without closing) leaves a readable
// file; resume() reports what exists, drops runs cut short, and the rest can be appended.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include "portbench/store/reader.hpp"
#include "portbench/store/writer.hpp"
#include "test_data.hpp"

namespace portbench::store {
namespace {

using testing::temp_file;
using testing::test_config;
using testing::test_provenance;
using testing::test_run;

constexpr int configs = 5;
constexpr int runs = 2;

void write_everything_missing(results_writer& w) {
  for (int c = 0; c < configs; ++c) {
    w.add_config(test_config(c));
    for (int run = 0; run < runs; ++run) {
      for (role r : {role::reference, role::port}) {
        run_record rec = test_run(test_config(c), r, run, 20000 + 10 * c + run);
        if (!w.contains(rec.key())) w.append(rec);
      }
    }
  }
}

/// In a child: writes `appends` runs, then dies without closing the file.
void write_then_die(const std::filesystem::path& path, int appends) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      auto w = results_writer::create(path, test_provenance());
      int done = 0;
      for (int c = 0; c < configs && done < appends; ++c) {
        w.add_config(test_config(c));
        for (int run = 0; run < runs && done < appends; ++run) {
          for (role r : {role::reference, role::port}) {
            if (done++ == appends) break;
            w.append(test_run(test_config(c), r, run, 20000 + 10 * c + run));
          }
        }
      }
      _exit(0);  // no destructor, no H5Fclose: as if killed
    } catch (...) {
      _exit(3);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(StoreCrash, KilledWriterLeavesReadableFileAndResumeSkipsWhatExists) {
  auto path = temp_file("killed.h5");
  write_then_die(path, 7);  // config 0 whole, config 1 without its last port run

  results_file partial = read_results(path);
  EXPECT_EQ(partial.run_count(), 7u);
  EXPECT_EQ(partial.provenance.suite, "smoke");

  auto w = results_writer::resume(path);
  EXPECT_EQ(w.existing_runs().size(), 7u);
  EXPECT_TRUE(w.contains({test_config(0).id, role::reference, 0}));
  EXPECT_TRUE(w.contains({test_config(1).id, role::reference, 1}));
  EXPECT_FALSE(w.contains({test_config(1).id, role::port, 1}));
  write_everything_missing(w);
  w.close();

  results_file full = read_results(path);
  EXPECT_EQ(full.run_count(), static_cast<std::size_t>(configs * runs * 2));
  ASSERT_EQ(full.configs.size(), static_cast<std::size_t>(configs));
  for (int c = 0; c < configs; ++c) EXPECT_EQ(full.configs[c].info.id, test_config(c).id);
}

TEST(StoreCrash, RunGroupWithoutMarkerIsIgnoredThenRemovedOnResume) {
  auto path = temp_file("cut_run.h5");
  {
    auto w = results_writer::create(path, test_provenance());
    w.add_config(test_config(0));
    w.append(test_run(test_config(0), role::reference, 0, 3000));
  }
  {  // what a kill between datasets and the COMPLETE marker leaves behind
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    std::string cfg = "configs/rms_norm/dtype=float16,m=1024,n=1024/reference/run_1";
    hid_t g = H5Gcreate2(f, cfg.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(g, 0);
    H5Gclose(g);
    H5Fclose(f);
  }
  results_file f = read_results(path);
  EXPECT_EQ(f.run_count(), 1u);
  EXPECT_EQ(f.incomplete_runs, 1);

  auto w = results_writer::resume(path);
  EXPECT_EQ(w.removed_incomplete_runs(), 1);
  EXPECT_FALSE(w.contains({test_config(0).id, role::reference, 1}));
  w.append(test_run(test_config(0), role::reference, 1, 3100));
  w.close();
  results_file again = read_results(path);
  EXPECT_EQ(again.run_count(), 2u);
  EXPECT_EQ(again.incomplete_runs, 0);
}

TEST(StoreCrash, UnreadableGroupIsPassedOverAndResumeRebuildsTheFile) {
  auto path = temp_file("damaged.h5");
  std::filesystem::remove(std::filesystem::path(path.string() + ".damaged"));
  {
    auto w = results_writer::create(path, test_provenance());
    for (int c = 0; c < 2; ++c) {
      w.add_config(test_config(c));
      w.append(test_run(test_config(c), role::reference, 0, 3000));
      w.append(test_run(test_config(c), role::port, 0, 2900));
    }
  }
  {  // a role group whose contents make no sense stands in for one a kill left half-written
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    std::string role = "configs/rms_norm/dtype=float16,m=2048,n=1024/port";
    hid_t g = H5Gopen2(f, role.c_str(), H5P_DEFAULT);
    ASSERT_GE(g, 0);
    H5Adelete(g, "role");
    H5Gclose(g);
    H5Fclose(f);
  }
  results_file f = read_results(path);
  ASSERT_EQ(f.unreadable_groups.size(), 1u);
  EXPECT_NE(f.unreadable_groups[0].find("/port (unknown role '')"), std::string::npos) << f.unreadable_groups[0];
  EXPECT_EQ(f.run_count(), 3u);  // everything else is still there

  auto w = results_writer::resume(path);
  EXPECT_TRUE(std::filesystem::exists(path.string() + ".damaged"));
  EXPECT_EQ(w.existing_runs().size(), 3u);
  EXPECT_FALSE(w.contains({test_config(1).id, role::port, 0}));
  w.append(test_run(test_config(1), role::port, 0, 2900));
  w.close();
  results_file again = read_results(path);
  EXPECT_TRUE(again.unreadable_groups.empty());
  EXPECT_EQ(again.run_count(), 4u);
  EXPECT_EQ(again.provenance.created_utc, f.provenance.created_utc);
}

}  // namespace
}  // namespace portbench::store
