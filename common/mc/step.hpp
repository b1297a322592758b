// The interface every MC step implements. The harness (main.cpp) owns everything else:
// flags, the problem, timing, validation against the exact solution, output and results.
//
// A step source file defines step_info() and make_step(); nothing more is needed for it to
// become a program `mc_NN_name`.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/fields.hpp"
#include "core/step_info.hpp"
#include "mc/problem.hpp"

namespace mc {

// What a step returns: its photons are split into disjoint batches (a CPU batch, a GPU
// block), and row b holds the weight the photons of batch b deposited in each shell, then
// (last column) how many photons batch b simulated. Batches are independent, so the spread
// of the rows gives the per-photon covariance of the shell heats (steps/mc/README.md).
struct Tally {
  int shells = 0;
  std::vector<double> rows;  // batches() x (shells + 1), row-major

  size_t width() const { return size_t(shells) + 1; }
  size_t batches() const { return shells ? rows.size() / width() : 0; }
  void resize(int shell_count, size_t batch_count) {
    shells = shell_count;
    rows.assign(batch_count * width(), 0.0);
  }
  double* row(size_t b) { return rows.data() + b * width(); }
  const double* row(size_t b) const { return rows.data() + b * width(); }
};

struct StepInfo {
  std::string id;     // "07_fixed_point_rows"
  std::string title;  // one line for tables
  bool gpu;
  core::Tunables tunables;  // the step's own flags with their defaults
  // One process per GPU under a launcher, the tallies summed by NCCL (core/harness.hpp).
  bool multi_gpu = false;
};

class Step {
 public:
  virtual ~Step() = default;
  // Allocate (first call only) and keep what compute() needs.
  virtual void load(const Problem& problem) = 0;
  // Simulate problem.photons photons; the harness times exactly this call.
  virtual void compute() = 0;
  // Copy the tally back to the host.
  virtual void store(Tally& tally) = 0;
  // Parameters the step chose itself (e.g. the photons per thread it actually used);
  // they go into the record's "params" next to the flags.
  virtual void describe(core::Fields& params) const { (void)params; }
};

StepInfo step_info();
std::unique_ptr<Step> make_step(const core::Tunables& tunables);

}  // namespace mc
