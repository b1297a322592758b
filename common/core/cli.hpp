// The flags every step program accepts (DESIGN.md, "The step contract"), on CLI11.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
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

// A step's tuning parameter (--threads, --unroll, ...): declared by the step with its
// default and its allowed range, so that a step only accepts the flags it uses.
struct Tunable {
  std::string name;
  long value;
  long min, max;
  std::string help;
};
using Tunables = std::vector<Tunable>;
void add_tunables(CLI::App& app, Tunables& tunables);
long tunable(const Tunables& t, const std::string& name);  // throws if the step did not declare it

// Parses argv. Returns an exit code when the program should stop now (0 after --help,
// 2 after a bad flag, with CLI11's message naming it), nothing when it should go on.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

}  // namespace core
