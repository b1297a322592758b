// Reading results records (report/README.md, "Results record") for the report: every line of
// every input file is parsed and checked; a malformed line stops the report with file:line.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace report {

using json = nlohmann::json;

struct Record {
  json data;
  std::string file;  // as named in the report (Input::name)
  int line = 0;
  size_t order = 0;  // position over all inputs: the later of two equally new records wins

  std::string track() const { return data["track"]; }
  std::string step() const { return data["step"]; }
  // A ladder row's name: the step, a peer's mode where it has several ("pytorch tf32_cl"), and
  // the tag of a tagged run ("11_gridding (width5)").
  std::string row_name() const;
  std::string tag() const { return data.value("tag", ""); }
  std::string time() const;        // ISO-8601 of the run, "" when absent
  std::string commit() const;      // "unknown" when absent
  bool gpu() const;                // kind == "gpu"
  std::string where() const;       // GPU name, or "CPU model (N threads)"
  std::string device_name() const; // "" for CPU records
  std::string problem() const;     // problem.name
  double time_ms() const;          // timing.kernel_ms.median
  double total_ms() const;         // timing.total_ms.median
  double throughput() const;       // throughput.value
  std::string unit() const;        // throughput.unit
  // A throughput that is a time per unit of work ("ms/gulp"): smaller is faster.
  bool lower_is_better() const { return unit().rfind("ms/", 0) == 0; }
  bool newer_than(const Record& other) const;
};

// One input file and the name the report gives it.
struct Input {
  std::string path;  // as given; an extra file's messages (file:line) name it so
  // A results folder's file by its file name; an extra file by its path relative to the
  // repository, or by its file name outside it (extra_name): the report says nothing about the
  // machine that wrote it, such as where its checkout lies.
  std::string name;
  // A file that runs append to on this machine (--extra): a run killed while appending, or a
  // full disk, leaves an incomplete last line, which is skipped with a warning instead of
  // stopping the report. Committed results (the results folder) stay strict.
  bool appended_locally = false;
};

// Every *.jsonl in `dir`, sorted by name (so the report does not depend on directory order).
// A missing folder is a usage error; an empty one gives no inputs.
std::vector<Input> results_folder(const std::string& dir);

// The report's name for an extra results file: its path relative to the repository, the folder
// that holds the report/ of `results_dir` (as --steps assumes: "build/results/local.jsonl"),
// where the file lies inside it, else its file name. Never an absolute path: the report says
// the same of the same records on every machine.
std::string extra_name(const std::string& path, const std::string& results_dir);

// Reads and checks every line (blank lines are skipped). Throws core::UsageError
// "file:line: what is wrong" on the first malformed line, or when a file cannot be read;
// the one exception is an unparsable last line of an appended_locally file (warned on stderr).
std::vector<Record> load(const std::vector<Input>& inputs);

// The tuning grids of the steps that have one: "track/step" -> the grid's keys in the order
// sweep.json lists them (steps/<track>/<NN_name>/sweep.json, see the tuning contract). A
// missing folder gives none; an unreadable sweep.json is a usage error naming it.
using Grids = std::map<std::string, std::vector<std::string>>;
Grids load_grids(const std::string& steps_dir);

// Each step's declared parent, from steps/<track>/<NN_name>/parent: one line, the parent's id
// ("07_loss_block_sums"), or "none" for a ladder's root, optionally followed by what the step is
// beside its parent ("reference": a library's, not a rung; "branch": a side path). Keyed
// "track/step". A missing folder or file gives none; a malformed file is a usage error.
struct Parent {
  std::string id;    // empty for a root
  std::string kind;  // "", "reference" or "branch"
};
using Parents = std::map<std::string, Parent>;
Parents load_parents(const std::string& steps_dir);

// The node at a dotted path ("timing.kernel_ms.median"), or nullptr.
const json* find_path(const json& j, const std::string& path);
// Numeric field by dotted path ("params.threads"), when present and a number.
std::optional<double> number_at(const json& j, const std::string& path);
// Scalar field by dotted path as text: strings as they are, numbers and booleans as JSON.
std::optional<std::string> text_at(const json& j, const std::string& path);

}  // namespace report
