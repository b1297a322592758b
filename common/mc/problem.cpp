#include "mc/problem.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/portable.hpp"

namespace mc {

double Problem::shell_volume_cm3(int i) const {
  const double dr = shell_cm();
  return 4.0 * core::kPi * dr * dr * dr * (double(i) * i + i + 1.0 / 3.0);
}

nlohmann::json Problem::params() const {
  return {{"photons", photons},
          {"seed", seed},
          {"mu_a_per_cm", mu_a},
          {"mu_s_per_cm", mu_s},
          {"shells", shells},
          {"microns_per_shell", microns_per_shell},
          {"weight_threshold", weight_threshold},
          {"roulette_survival", roulette_survival}};
}

std::string Problem::digest() const {
  const std::string text = params().dump();
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

uint64_t photons_of_size(const std::string& size) {
  if (size == "tiny") return uint64_t(1) << 17;
  if (size == "small") return uint64_t(1) << 22;
  if (size == "large") return uint64_t(1) << 30;
  throw std::invalid_argument("unknown size " + size);
}

}  // namespace mc
