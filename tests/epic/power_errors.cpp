// The errors a step makes in the zero-baseline check (validation.hpp, check_power), and how far
// apart the channels' and gulps' sums lie, which is what the check must tell apart: the figures
// that set power_threshold (steps/epic/README.md, "Validation"). A tool, not a test; built with
// each step's source (epic_power_errors_NN).
//
// For each size and imaging case: the step's worst error over every channel and plane, in units
// of the autocorrelation power; and from the reference alone, the smallest difference between two
// channels' sums (a swapped or duplicated channel) and between a channel's two gulps (a gulp
// dropped or imaged twice, over --gulps 2), in the same units.
// Usage: epic_power_errors [--image-size 64|128] [--sizes tiny,small,large]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/error.hpp"
#include "epic/inputs.hpp"
#include "epic/problem.hpp"
#include "epic/reference.hpp"
#include "epic/step.hpp"
#include "epic/validation.hpp"

namespace epic {
namespace {

struct Case {
  const char* name;
  int support;
  KernelKind kernel;
  bool no_autos;
};

Problem make(const std::string& size, int image_size, const Case& k, int gulps) {
  const Preset preset = preset_of_size(size);
  Problem p;
  p.name = size;
  p.seed = 1;
  p.obs.channels = preset.channels;
  p.obs.samples_per_gulp = preset.samples_per_gulp;
  p.obs.gulps = gulps;
  p.obs.pols = 2;
  p.station = generate_station(p.seed);
  p.sky = default_sky(p.seed);
  p.has_sky = true;
  p.imaging.image_size = image_size;
  p.imaging.support = k.support;
  p.imaging.kernel = k.kernel;
  p.imaging.products = default_products(2);
  p.imaging.remove_autos = k.no_autos;
  simulate_voltages(p);
  finish(p);
  return p;
}

// The reference's sums of one gulp of `p` alone.
ZeroLag gulp_sums(const Problem& p, int g) {
  Problem one = p;
  one.obs.gulps = 1;
  const size_t bytes = p.voltages.size() / size_t(p.obs.gulps);
  one.voltages.assign(p.voltages.begin() + long(g * bytes), p.voltages.begin() + long((g + 1) * bytes));
  return zero_lag(one);
}

int run(int argc, char** argv) {
  int image_size = 64;
  std::vector<std::string> sizes = {"tiny", "small", "large"};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--image-size")) image_size = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--sizes")) {
      sizes.clear();
      std::string s = argv[i + 1];
      for (size_t a = 0, b; a <= s.size(); a = b + 1) {
        b = s.find(',', a);
        if (b == std::string::npos) b = s.size();
        sizes.push_back(s.substr(a, b - a));
      }
    } else {
      fprintf(stderr, "usage: %s [--image-size 64|128] [--sizes tiny,small,large]\n", argv[0]);
      return 2;
    }
  }
  const StepInfo info = step_info();
  if (info.gpu) core::require_gpu(0);
  const std::vector<Case> cases = {{"delta", 1, KernelKind::delta, false},      {"pswf2", 2, KernelKind::pswf, false},
                                   {"pswf2-noautos", 2, KernelKind::pswf, true}, {"kb3", 3, KernelKind::kaiser_bessel, false},
                                   {"pswf3-noautos", 3, KernelKind::pswf, true}};
  printf("step %s (%s), %d x %d: errors and separations in units of the autocorrelation power\n", info.id.c_str(),
         accuracy_name(info.accuracy), image_size, image_size);
  printf("%-6s %-14s %6s %12s %14s %12s %9s\n", "size", "case", "gulps", "step worst", "channels apart", "gulps apart",
         "check ms");
  double worst_all = 0, apart_min = HUGE_VAL;
  for (const std::string& size : sizes)
    for (const Case& k : cases) {
      // large: the default case, with and without the autos, and the largest correction.
      if (size == "large" && std::strcmp(k.name, "pswf2") && std::strcmp(k.name, "pswf3-noautos")) continue;
      const int gulps = 2;
      const Problem p = make(size, image_size, k, gulps);
      StepInputs in(p);
      auto step = make_step(info.tunables);  // the step's defaults
      step->load(in.get());
      step->compute();
      std::vector<float> image(in.get().image_values());
      step->store(image.data());
      const auto start = std::chrono::steady_clock::now();
      const PowerCheck pc = check_power(p, info.accuracy, image.data());
      const double check_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      // Separations, from the reference: every pair of channels, the plane that differs most
      // (what a swap or duplicate shows); a channel's gulp 0 against its gulp 1 likewise.
      const ZeroLag z = zero_lag(p), g0 = gulp_sums(p, 0), g1 = gulp_sums(p, 1);
      const int C = z.channels, Q = z.planes;
      double channels_apart = HUGE_VAL, gulps_apart = HUGE_VAL;
      for (int a = 0; a < C; ++a) {
        for (int b = a + 1; b < C; ++b) {
          double most = 0;
          for (int q = 0; q < Q; ++q)
            most = std::max(most, std::abs(z.sum[size_t(q) * C + a] - z.sum[size_t(q) * C + b]) / z.scale[size_t(q) * C + a]);
          channels_apart = std::min(channels_apart, most);
        }
        double most = 0;
        for (int q = 0; q < Q; ++q)
          most = std::max(most, std::abs(g0.sum[size_t(q) * C + a] - g1.sum[size_t(q) * C + a]) / z.scale[size_t(q) * C + a]);
        gulps_apart = std::min(gulps_apart, most);
      }
      printf("%-6s %-14s %6d %12.3g %14.3g %12.3g %9.0f\n", size.c_str(), k.name, gulps, pc.worst,
             C > 1 ? channels_apart : NAN, gulps_apart, check_ms);
      fflush(stdout);
      worst_all = std::max(worst_all, pc.worst);
      if (C > 1) apart_min = std::min(apart_min, channels_apart);
      apart_min = std::min(apart_min, gulps_apart);
    }
  printf("worst step error %.3g (limit %.3g); smallest separation %.3g\n", worst_all, power_threshold(info.accuracy), apart_min);
  return 0;
}

}  // namespace
}  // namespace epic

int main(int argc, char** argv) {
  try {
    return epic::run(argc, argv);
  } catch (const core::NoGpuError& e) {
    fprintf(stderr, "skipped: %s\n", e.what());
    return 77;
  } catch (const std::exception& e) {
    fprintf(stderr, "%s\n", e.what());
    return 3;
  }
}
