// Results lines parse back to the schema; malformed records are named.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <fstream>

#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "core/error.hpp"
#include "core/results.hpp"
#include "core/timing.hpp"

namespace {

core::json sample_record() {
  core::TimedRuns t;
  t.kernel_ms = {1.5, 1.25, 2.0};
  t.total_ms = {2.5, 2.25, 3.0};
  t.load_ms = {0.5, 0.4, 0.6};
  t.store_ms = {0.25, 0.2, 0.3};
  t.first_ms = 120;
  t.repeat = 3;
  core::DeviceInfo d{"NVIDIA H100 80GB HBM3", "9.0", 132, 1980, 0};
  core::CoreOptions o;
  o.tag = "tune";
  core::json r = core::step_record("mri", "03_gather", "gather", true, {{"name", "small"}},
                                   {{"kernel", "fhd"}, {"threads", 256}}, d, t, o);
  r["work"] = {{"unit", "pairs"}, {"count", 1e9}};
  r["throughput"] = {{"value", 6.7e11}, {"unit", "pairs/s"}};
  core::ErrorMetrics m;
  m.rel_l2 = 1e-6;
  r["validation"] = core::validation_json("cpu-double", m, true);
  return r;
}

TEST(Results, AppendedLineParsesBackToTheSchema) {
  const std::string path = (std::filesystem::temp_directory_path() / ("stepwise_results_" + std::to_string(::getpid()) + ".jsonl")).string();
  std::remove(path.c_str());
  core::append_record(path, sample_record());
  core::append_record(path, sample_record());
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    const core::json r = core::json::parse(line);
    EXPECT_EQ(core::check_record(r), "");
    EXPECT_EQ(r["schema"], 1);
    EXPECT_EQ(r["kind"], "gpu");
    EXPECT_EQ(r["device"]["sms"], 132);
    EXPECT_EQ(r["timing"]["kernel_ms"]["median"], 1.5);
    EXPECT_EQ(r["timing"]["load_ms"]["median"], 0.5);
    EXPECT_EQ(r["timing"]["store_ms"]["median"], 0.25);
    EXPECT_EQ(r["timing"]["first_run_ms"], 120);
    EXPECT_EQ(r["tag"], "tune");
    EXPECT_FALSE(r["commit"].get<std::string>().empty());
  }
  EXPECT_EQ(lines, 2);
  std::remove(path.c_str());
}

// Programs appending to one results file at once (two terminals, a parallel sweep): every
// record must arrive as one whole line. The records are far larger than a stream buffer, so
// a writer that split them into several writes would interleave.
TEST(Results, ConcurrentAppendsKeepEveryLineWhole) {
  const std::string path = (std::filesystem::temp_directory_path() / ("stepwise_concurrent_" + std::to_string(::getpid()) + ".jsonl")).string();
  std::remove(path.c_str());
  constexpr int kWriters = 6, kRecords = 20;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      core::json r = sample_record();
      r["profile"] = {{"heat", std::vector<double>(20000, 1.0 / (w + 3))}, {"writer", w}};
      for (int i = 0; i < kRecords; ++i) core::append_record(path, r);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  std::vector<int> per_writer(kWriters, 0);
  while (std::getline(in, line)) {
    ++lines;
    const core::json r = core::json::parse(line, nullptr, false);
    ASSERT_FALSE(r.is_discarded()) << "line " << lines << " is not one whole record";
    EXPECT_EQ(core::check_record(r), "");
    ++per_writer.at(r["profile"]["writer"].get<int>());
  }
  EXPECT_EQ(lines, kWriters * kRecords);
  for (int n : per_writer) EXPECT_EQ(n, kRecords);
  std::remove(path.c_str());
}

TEST(Results, FailedWriteIsAnError) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  EXPECT_THROW(core::append_record("/dev/full", sample_record()), core::RuntimeError);
}

TEST(Results, CheckNamesTheMissingField) {
  core::json r = sample_record();
  r.erase("throughput");
  EXPECT_NE(core::check_record(r).find("throughput"), std::string::npos);
  r = sample_record();
  r["timing"]["kernel_ms"].erase("median");
  EXPECT_NE(core::check_record(r).find("timing.kernel_ms.median"), std::string::npos);
  r = sample_record();
  r["schema"] = 2;
  EXPECT_NE(core::check_record(r).find("schema"), std::string::npos);
  r = sample_record();
  r.erase("device");
  EXPECT_NE(core::check_record(r).find("device"), std::string::npos);
}

TEST(Results, NonFiniteMetricsBecomeNull) {
  core::ErrorMetrics m;
  m.psnr_db = std::numeric_limits<double>::infinity();
  const core::json v = core::validation_json("cpu-double", m, true);
  EXPECT_TRUE(v["psnr_db"].is_null());
  EXPECT_NO_THROW(core::json::parse(v.dump()));
}

TEST(Results, ProbeRecordNeedsCeilings) {
  core::json p = core::new_record("probe", "ceilings");
  p["device"] = {{"name", "x"}};
  EXPECT_NE(core::check_record(p), "");
  p["ceilings"] = {{"sfu_per_s", 4e12}};
  EXPECT_EQ(core::check_record(p), "");
}

// The first run, warm-up or timed, is recorded apart (what a process pays once shows as its
// excess over the timed runs), and each timed run's load and store are inside its end-to-end
// time. The first load sleeps: the sleep must land in first_ms whether or not there is a
// warm-up, and only there (the timed runs' loads do not sleep; no bound on their own time).
TEST(Timing, FirstRunAndPhasesAreRecorded) {
  for (int warmup : {0, 1}) {
    int loads = 0, computes = 0, stores = 0;
    const core::Phases phases{[&] {
                                if (loads++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(30));
                              },
                              [&] { ++computes; }, [&] { ++stores; }};
    const auto timer = core::make_host_timer();
    const core::TimedRuns t = core::time_runs(phases, *timer, warmup, 3, false);
    EXPECT_EQ(loads, warmup + 3);
    EXPECT_EQ(computes, warmup + 3);
    EXPECT_EQ(stores, warmup + 3);
    EXPECT_GE(t.first_ms, 30.0) << "warmup " << warmup;
    EXPECT_GE(t.load_ms.min, 0.0);
    EXPECT_GE(t.store_ms.min, 0.0);
    EXPECT_GE(t.total_ms.max, t.load_ms.max) << "a run's load is inside its end-to-end time";
    if (warmup == 1) EXPECT_LT(t.load_ms.max, 30.0) << "the warm-up's sleep counted in a timed run";
    else EXPECT_GE(t.load_ms.max, 30.0) << "the first timed run's sleep is its load";
  }
}

}  // namespace
