// The flags every step program accepts (the step contract in README.md), on CLI11. Only the
// harness includes this; a step sees step_info.hpp, which keeps CLI11 out of every step's
// compile (it is most of an nvcc run's time).
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/step_info.hpp"

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

// The tunables' flags: each step's own, with its default and range (step_info.hpp).
void add_tunables(CLI::App& app, Tunables& tunables);

// A range check for real-valued flags that also refuses NaN and infinities (a plain range
// check lets NaN through: every comparison with it is false).
CLI::Validator FiniteRange(double min, double max);

// Parses argv. Returns an exit code when the program should stop now (0 after --help,
// 2 after a bad flag, with CLI11's message naming it), nothing when it should go on.
// Every floating-point flag of the program refuses NaN and infinities, whatever its range.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

// Refuses an output file that cannot be written, before any work is done (UsageError naming
// the flag and the path): a folder, a pipe or socket, a file without write permission, or a
// new file whose parent folder is missing, a file, or not writable. No folder is created: the
// parent must exist.
void check_output_path(const std::string& flag, const std::string& path);

// The folder an output flag names (a problem folder a dataset writer fills), made before any
// work: an existing writable folder is taken as it is; a new one is made, itself only, inside
// an existing writable folder. Anything else (a file, a missing or unwritable parent, a parent
// that takes no folder) is a UsageError naming the flag and the path.
void make_output_folder(const std::string& flag, const std::string& path);

}  // namespace core
