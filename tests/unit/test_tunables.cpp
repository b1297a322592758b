// A step's own flags (core::Tunable): numbers in range, and named choices that read back as
// their index and go into the record as their word.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cli.hpp"

namespace {

// Parses `args` (after the program name) into a fresh set of tunables; true if CLI11 accepted them.
bool parse(core::Tunables& t, std::vector<std::string> args) {
  CLI::App app("tunables");
  core::add_tunables(app, t);
  std::vector<const char*> argv = {"program"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(int(argv.size()), const_cast<char**>(argv.data()));
    return true;
  } catch (const CLI::ParseError&) {
    return false;
  }
}

core::Tunables step_flags() {
  return {{"threads", 256, 32, 1024, "threads per block"},
          {"precision", 0, 0, 1, "operands", true, {"tf32", "bf16"}}};
}

TEST(Tunables, ChoiceReadsAsItsIndexAndRecordsItsWord) {
  core::Tunables t = step_flags();
  ASSERT_TRUE(parse(t, {"--precision", "bf16", "--threads", "128"}));
  EXPECT_EQ(core::tunable(t, "precision"), 1);
  EXPECT_EQ(core::tunable(t, "threads"), 128);
  const nlohmann::json j = core::tunables_json(t);
  EXPECT_EQ(j["precision"], "bf16");
  EXPECT_EQ(j["threads"], 128);
}

TEST(Tunables, ChoiceDefaultsToItsFirstDeclaredValue) {
  core::Tunables t = step_flags();
  ASSERT_TRUE(parse(t, {}));
  EXPECT_EQ(core::tunable(t, "precision"), 0);
  EXPECT_EQ(core::tunables_json(t)["precision"], "tf32");
}

TEST(Tunables, WordOutsideTheChoicesIsRefused) {
  for (const std::string word : {"fp16", "BF16", "1", ""}) {
    core::Tunables t = step_flags();
    EXPECT_FALSE(parse(t, {"--precision", word})) << word;
    EXPECT_EQ(core::tunable(t, "precision"), 0) << word;
  }
}

TEST(Tunables, NumberOutsideItsRangeIsRefused) {
  core::Tunables t = step_flags();
  EXPECT_FALSE(parse(t, {"--threads", "2048"}));
  EXPECT_FALSE(parse(t, {"--threads", "nan"}));
}

}  // namespace
