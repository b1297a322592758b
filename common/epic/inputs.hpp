// Binds a problem to what a step reads (step.hpp's Inputs): the voltages and plan in place,
// float copies of the kernel weights and grid correction (the references keep the doubles).
#pragma once
#include <vector>

#include "epic/problem.hpp"
#include "epic/step.hpp"

namespace epic {

class StepInputs {
 public:
  explicit StepInputs(const Problem& p);
  StepInputs(const StepInputs&) = delete;
  StepInputs& operator=(const StepInputs&) = delete;
  const Inputs& get() const { return in_; }

 private:
  std::vector<float> weight_x_, weight_y_, correction_;
  Inputs in_{};
};

}  // namespace epic
