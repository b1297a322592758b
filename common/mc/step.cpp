#include "step.hpp"

#include <stdexcept>

namespace mc {

double real_tunable(const RealTunables& t, const std::string& name) {
  for (const RealTunable& r : t)
    if (r.name == name) return r.value;
  throw std::logic_error("step reads real tunable '" + name + "' that it did not declare");
}

}  // namespace mc
