// What the report shows, grouped from the records: measured ceilings, ladders (one table per
// track, variant, problem and GPU), tuning sweeps and problem-size sweeps.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "records.hpp"

namespace report {

// What the report knows about a track; an unknown track gets the generic entry.
struct Track {
  std::string id;
  std::string title;
  std::string variant_key;  // params key that splits a track into separate tables ("kernel")
  std::string variant_label(const std::string& value) const;  // "fhd" -> "F^H d"
  // The binding ceiling: achieved rate / (probe ceiling / per_unit); empty key = none defined.
  std::string ceiling_key;
  double ceiling_per_unit = 1;
  std::string ceiling_unit;  // the throughput unit the ceiling applies to
  std::string ceiling_text;  // how the report explains it
};
const Track& track_info(const std::string& id);
// Tracks in teaching order (mri, mc), then any other track alphabetically.
std::vector<std::string> track_order(const std::vector<Record>& records);

// What a record is to the report, by track and tag: "tune" points and "sizes" sweeps are
// drawn as such; any other record is a ladder row. Every file of the results folder is
// results: profiler dumps, logs and one-off experiments belong elsewhere (report/evidence/).
// study: a track's program that is not a step of its ladder (mri's reconstruction and its
// gridding accuracy sweep): a section of its own, never a ladder row.
enum class Role { probe, ladder, tune, sizes, study };
Role role_of(const Record& r);

// The newest probe record per device name.
using Probes = std::map<std::string, const Record*>;
Probes newest_probes(const std::vector<Record>& records);

// "% of ceiling" cell for one row.
std::string ceiling_cell(const Track& track, const Record& r, const Probes& probes);
std::optional<double> ceiling_fraction(const Track& track, const Record& r, const Probes& probes);

std::string variant_of(const Track& track, const Record& r);

struct Ladder {
  std::string track, variant, problem, device;  // device "" = a CPU-only table
  std::vector<const Record*> rows;              // newest per step, in teaching order
};
std::vector<Ladder> ladders(const std::vector<Record>& records, const std::string& track);

// One sweep per commit: points measured on different versions of a step's code are not
// comparable, so each version's sweep is shown on its own, newest first. Only the newest
// version's sweep is drawn; an older one is superseded and summarised.
struct TuneSweep {
  std::string track, step, variant, problem, where, commit;
  std::vector<std::string> axes;    // independent params that vary: the grid's keys first
  std::vector<const Record*> points;  // newest per combination of axis values
  std::string superseded_by;        // the commit of the newest sweep of the same step, variant,
                                    // problem and machine; "" for that newest sweep itself
};
// Axes: the params that vary over the sweep, the grid's keys first (sweep.json, when `grids`
// has the step), without params that the axes before them determine (e.g. a block count
// derived from threads and photons per thread).
std::vector<TuneSweep> tune_sweeps(const std::vector<Record>& records, const std::string& track,
                                   const Grids& grids);

struct SizeSweep {
  std::string track, variant;
  std::map<std::string, std::map<double, const Record*>> series;  // "step on where" -> count -> newest
};
std::vector<SizeSweep> size_sweeps(const std::vector<Record>& records, const std::string& track);

// Whether a step id starts with its number ("07_sfu"): only numbered steps climb the ladder
// (step speedups, the fastest step); another row is shown for comparison.
bool numbered(const std::string& step);
std::string short_step(const std::string& step);  // "07_sfu" -> "07"

}  // namespace report
