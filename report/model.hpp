// What the report shows, grouped from the records: measured ceilings, ladders (one table per
// track, variant, problem and GPU), tuning sweeps and problem-size sweeps.
#pragma once
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "records.hpp"

namespace report {

// One bound on a step's speed: the rate at which it did some work, against the rate at which
// the GPU can do that work, as stepwise_probe measured it on the same device:
//   fraction = (work / kernel time) / (probe ceiling / per_unit)
// (with `work` empty the achieved rate is the record's throughput itself).
struct Bound {
  std::string name;     // how the report names it: "SFU sin/cos pairs", "FFT flops", "voltage bytes"
  std::string work;     // record path of the work done in timing.kernel_ms ("work.flop"); "" = the
                        // throughput, which must then be in `unit`
  std::string unit;     // with `work` empty: the throughput unit the bound applies to ("pairs/s")
  std::string ceiling;  // the probe's ceilings key ("sfu_per_s", "copy_bytes_per_s"); "" = the
                        // arithmetic rate of the step's precision (arithmetic_ceiling below)
  double per_unit = 1;  // ceiling units per unit of work (2 SFU operations per pair)
  bool optional = false;  // left out where the probe lacks its ceiling (a probe older than the
                          // ceiling), instead of leaving the step's cell n/a
};

// The probe's arithmetic rate for a step's precision (params.accuracy, else validation.class):
// fp32 the FP32 FMA rate; tf32 and bf16 a tensor-core rate; half the half2 rate. `key` is ""
// for a precision no ceiling describes; `missing` says what is not measured when the probe
// lacks the key (a probe record older than the ceiling; the probe measures the FP32, half2,
// TF32 and BF16 mma.sync rates, the SFU sin/cos rate, device copy and pinned host-to-device
// bandwidth).
struct ArithmeticCeiling {
  std::string key, missing;
};
ArithmeticCeiling arithmetic_ceiling(const std::string& precision);
std::string precision_of(const Record& r);

// What the report knows about a track; an unknown track gets the generic entry.
struct Track {
  std::string id;
  std::string title;
  std::string variant_key;  // params key that splits a track into separate tables ("kernel")
  std::string variant_label(const std::string& value) const;  // "fhd" -> "F^H d"
  // The bounds that may bind a GPU step; the larger fraction is the one that binds. None: the
  // track defines no ceiling.
  std::vector<Bound> bounds;
  // Precisions (params.accuracy) whose rows no bound describes, with why: mri's gridding
  // computes no voxel-sample pair.
  std::map<std::string, std::string> unbound;
  std::string ceiling_text;  // how the report explains it
  // How the roofline counts the track's flop and compulsory bytes; none: no roofline.
  std::string roofline_text;
};
const Track& track_info(const std::string& id);
// Tracks in teaching order (mri, mc), then any other track alphabetically.
std::vector<std::string> track_order(const std::vector<Record>& records);

// What a record is to the report, by track and tag: "tune" points and "sizes" sweeps are
// drawn as such; any other record is a ladder row. Every file of the results folder is
// results: profiler dumps, logs and one-off experiments belong elsewhere (report/evidence/).
// study: a track's program that is not a step of its ladder (mri's reconstruction and its
// gridding accuracy sweep): a section of its own, never a ladder row.
// scaling: a run on several GPUs (`ranks.size` > 1), or a peer's run under a launcher (a
// `pytorch` record with `ranks`: DistributedDataParallel): the Scaling section's, never a ladder
// row. A multi-GPU step's run on one GPU (`ranks.size` 1) is its ladder row and its scaling base.
enum class Role { probe, ladder, tune, sizes, study, scaling };
// mri's gridding steps (12 on) choose their kernel from --tolerance; the ladder compares them
// at their default, and the other tolerances are a study of their own.
constexpr double kLadderTolerance = 1e-4;
Role role_of(const Record& r);

// The newest probe record per device name.
using Probes = std::map<std::string, const Record*>;
Probes newest_probes(const std::vector<Record>& records);

// A row against its ceilings: the binding (largest) fraction and its bound's name, or why
// there is none ("n/a (CPU)", "n/a (no probe on NVIDIA H200)", ...).
struct CeilingFraction {
  std::optional<double> fraction;
  std::string bound;
  std::string why_not;
};
CeilingFraction ceiling_of(const Track& track, const Record& r, const Probes& probes);
// "% of ceiling" cell for one row: "50.0 %", naming the bound where the track has several
// ("17.9 % (FFT flops)") or where the row is over it, or the reason for n/a.
std::string ceiling_cell(const Track& track, const Record& r, const Probes& probes);
std::optional<double> ceiling_fraction(const Track& track, const Record& r, const Probes& probes);

std::string variant_of(const Track& track, const Record& r);

// The roofline (report/README.md, "Roofline"): each GPU rung placed by its arithmetic intensity,
// its flop over the compulsory DRAM traffic of its problem, and its attained rate, its flop over
// the kernel time, under the probe's arithmetic rate for its precision and its copy bandwidth.
// Compulsory traffic is what any implementation of the problem moves between DRAM and the chip
// at the least: its inputs read once, its outputs written once, nothing an algorithm chooses to
// stage. It is a lower bound: a rung that re-reads its inputs moves more, so its own point would
// lie left of the one drawn. One function per track, from the problem's parameters:

// mri: per k-space sample F^H d reads kx, ky, kz, phi (re, im) and d (re, im), Q kx, ky, kz and
// phi (re, im); per voxel both read x, y, z and write the result (re, im); 4-byte floats.
// kernel "fhd" or "q"; another kernel gives 0.
double mri_compulsory_bytes(const std::string& kernel, double samples, double voxels);
// mc: the photons start at the origin from a handful of scalars; the heat of every shell (one
// double each) is written. Nothing is read per photon: mc is compute-bound at any photon count.
double mc_compulsory_bytes(double shells);
// mc records count photons, not flop: the float operations of one interaction of tiny_mc's walk
// (common/mc/cpu_photon.hpp), counted by hand, each +, -, *, /, sqrt and log as one: the step
// length (log, negation) 2, the move 6, the radius 6, the absorption 4, the new direction 8 plus
// 7 per try of the rejection method, which takes 4 / pi tries on average: 26 + 28 / pi (34.9).
// The RNG's integer work is not counted.
extern const double kMcFlopPerInteraction;
// epic: the voltages of every sample read once (1 byte each: 4+4-bit complex), the image,
// accumulated over all gulps, written once (a float per plane, channel and pixel).
double epic_compulsory_bytes(double samples, double channels, double stands, double pols, double image_size,
                             double planes);
// Image planes of epic's products ("XX,YY,XY*,YX*" -> 6): XX, YY and I one, XY* and YX* two
// (real, imaginary); 0 for a product it does not know.
int epic_planes(const std::string& products);
// ae's model (common/ae/model.hpp): channels x height x width images through convolutions to
// widths enc1, enc2, dec1, dec2 and back to the channels.
struct AeShape {
  double channels = 3, height = 32, width = 32;
  double enc1 = 256, enc2 = 128, dec1 = 128, dec2 = 256;
};
double ae_parameters(const AeShape& m);  // weights and biases: 751,875 for the full model
// Floats per image of the four hidden convolutions' outputs (after ReLU, at their own grid), the
// activations the backward pass needs: 368,640 for the full model.
double ae_hidden_activations(const AeShape& m);
// One training step of `batch` images: the images read once, the hidden activations written in
// the forward and read in the backward pass, the parameters read and written once; 4 bytes each
// (a BF16 step could store its activations in 2: its point would lie right of the one drawn).
double ae_compulsory_bytes(const AeShape& m, double batch);

// A rung on the roofline, or why it is not placed (why_not non-empty).
struct RooflinePoint {
  double flop = 0, bytes = 0, seconds = 0;
  std::string precision;  // the arithmetic it is held to: params.precision, params.accuracy or
                          // validation.class where that names one, else fp32
  double compute = 0;     // the probe's rate for that precision (flop/s)
  double bandwidth = 0;   // the probe's copy bandwidth (B/s)
  std::string why_not;
  double intensity() const { return flop / bytes; }
  double attained() const { return flop / seconds; }
  // The roof above the rung: the compute rate, or the bandwidth times its intensity left of the
  // ridge; the fraction of it the rung attained.
  double roof() const { return std::min(compute, bandwidth * intensity()); }
  bool memory_bound() const { return bandwidth * intensity() < compute; }
  double fraction() const { return attained() / roof(); }
};
RooflinePoint roofline_point(const Track& track, const Record& r, const Probes& probes);
// The arithmetic the roofline holds a rung to, and how the report names its ceiling.
std::string roofline_precision(const Record& r);
std::string precision_label(const std::string& precision);  // "fp32" -> "FP32", "bf16" -> "BF16 mma.sync"

struct Ladder {
  std::string track, variant, problem, device;  // device "" = a CPU-only table
  std::vector<const Record*> rows;              // newest per step, in teaching order
  // The rows of other machines than the table's own: CPU rows from a results file that holds no
  // GPU row of the table's problem (a CPU-only machine's, such as a laptop's
  // build/results/local.jsonl), by that machine (Record::where()). Each such machine's newest
  // row per step joins every GPU table of its problem beside the table's own row of the step,
  // so that a machine without a GPU sees where it stands. The table's own rows (its GPU's, and
  // its GPU host's CPU rows) are not in it.
  std::map<const Record*, std::string> guests;
  std::string machine_of(const Record& r) const;  // "" for the table's own rows
  // row_name(), followed by " on MACHINE" for another machine's row.
  std::string label(const Record& r) const;
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

// Keeps under `key` the newer of the record there and r (the later record of equal times wins).
template <class Key>
void keep_newest(std::map<Key, const Record*>& newest, const typename std::map<Key, const Record*>::key_type& key, const Record& r) {
  auto [it, inserted] = newest.emplace(key, &r);
  if (!inserted && r.newer_than(*it->second)) it->second = &r;
}

// Scaling over GPUs (report/README.md, "Scaling"). The GPUs of a run are its record's
// `ranks.size`, which the harness writes for the steps that declare multi_gpu and the peer for
// its DistributedDataParallel runs; a record without `ranks` ran on one GPU.
int gpus_of(const Record& r);
bool has_ranks(const Record& r);

// One row of the ladder (a step, a peer's mode) at each GPU count it ran on: the newest record
// of each. The one-GPU point is the row's newest record with `ranks.size` 1, else (a peer that
// ran DDP on several GPUs only) its newest run without `ranks`, a single process.
struct ScalingSeries {
  std::string row;                      // Record::row_name(): "24_data_parallel", "pytorch bf16_cl"
  std::map<int, const Record*> points;  // GPUs -> newest record
  bool single_without_ranks = false;    // the one-GPU point is a run without `ranks`
  const Record* parent = nullptr;       // the parent step's row on one GPU (steps/TRACK/STEP/parent)
  const Record* single() const {
    const auto it = points.find(1);
    return it == points.end() ? nullptr : it->second;
  }
};
// Per variant, problem and GPU: each row that ran on more than one GPU there, steps first, then
// the peer's. Only untagged GPU records and rows of tagged runs ("width5") take part.
struct ScalingTable {
  std::string track, variant, problem, device;
  std::vector<ScalingSeries> series;
};
std::vector<ScalingTable> scaling_tables(const std::vector<Record>& records, const std::string& track,
                                         const Parents& parents);

// Whether a step id starts with its number ("07_sfu"): only numbered steps climb the ladder
// (step speedups, the fastest step); another row is shown for comparison.
bool numbered(const std::string& step);
std::string short_step(const std::string& step);  // "07_sfu" -> "07"

}  // namespace report
