// What a step declares of itself: its tunables (its own flags) and its StepInfo. The step
// interfaces (common/TRACK/step.hpp) include this and not cli.hpp, so that no step's compile
// reads CLI11: the harness alone parses flags.
#pragma once
#include <nlohmann/json_fwd.hpp>  // tunables_json() is declared here, defined in cli.cpp: no JSON library in a step's compile
#include <string>
#include <utility>
#include <vector>

namespace core {

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
  // One process per GPU under a launcher, its collectives through NCCL (core/harness.hpp).
  bool multi_gpu = false;
};

}  // namespace core
