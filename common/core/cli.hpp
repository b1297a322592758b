// The flags every step program accepts (the step contract in README.md), on CLI11.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace core {

struct CoreOptions {
  std::string size = "small";  // tiny | small | large
  std::string input;           // a problem folder instead of a built-in size
  int repeat = 5;
  int warmup = 1;
  bool check = false;
  std::string json_path;
  std::string out;
  uint64_t seed = 1;
  int device = 0;
  bool quiet = false;
  std::string tag;  // labels the results record, e.g. "tune" for sweep points
};

void add_core_options(CLI::App& app, CoreOptions& o);

// A step's own parameter (--threads, --unroll, --gpu-fraction, ...), declared by the step with
// its default and its allowed range, so that a step accepts only the flags it uses.
struct Tunable {
  std::string name;
  double value;
  double min, max;
  std::string help;
  bool integer = true;  // false: a real number (a fraction, a factor)
  // A choice among named values: the flag takes one of these words, `value` is its index
  // (min 0, max choices.size() - 1), and the record shows the word.
  std::vector<std::string> choices = {};
};
using Tunables = std::vector<Tunable>;
using FlagDefaults = std::vector<std::pair<std::string, std::string>>;  // {"--flag", "value"}
void add_tunables(CLI::App& app, Tunables& tunables);
// The value of a declared tunable; throws std::logic_error if the step did not declare it.
long tunable(const Tunables& t, const std::string& name);  // a choice's index
double real_tunable(const Tunables& t, const std::string& name);
// {name: value} for the results record; integers stay integers.
nlohmann::json tunables_json(const Tunables& t);

// What a step declares of itself (its source's step_info()); Accuracy is its track's list of
// accuracy classes, whose thresholds the track's validation applies.
template <class Accuracy>
struct StepInfo {
  std::string id;     // "03_gather"
  std::string title;  // one line for tables
  bool gpu = false;
  Accuracy accuracy;
  Tunables tunables;  // the step's own flags with their defaults
  // The track's flags whose default this step needs otherwise, {"--image-size", "128"} for a
  // step that images 128 x 128 only: the program's defaults must run it as they run any step.
  FlagDefaults flag_defaults = {};
};

// A range check for real-valued flags that also refuses NaN and infinities (a plain range
// check lets NaN through: every comparison with it is false).
CLI::Validator FiniteRange(double min, double max);

// Parses argv. Returns an exit code when the program should stop now (0 after --help,
// 2 after a bad flag, with CLI11's message naming it), nothing when it should go on.
// Every floating-point flag of the program refuses NaN and infinities, whatever its range.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

// Refuses an output path that cannot be written before any work is done: a folder, a missing
// parent folder, a file that cannot be opened for appending (UsageError naming the flag).
void check_output_path(const std::string& flag, const std::string& path);

}  // namespace core
