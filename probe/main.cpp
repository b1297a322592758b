// stepwise_probe's flags, printing and record; the measurements are probe.cu's.
#include <cmath>
#include <cstdio>

#include "ceilings.hpp"
#include "core/cli.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/results.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"stepwise_probe: measure this GPU's SFU, FP32 and copy ceilings", "stepwise_probe"};
  std::string json_path;
  int device_index = 0;
  bool quiet = false;
  app.add_option("--json", json_path, "Append the ceilings record to this file");
  app.add_option("--device", device_index, "CUDA device index")->check(CLI::Range(0, 63));
  app.add_flag("--quiet", quiet, "Print only errors");
  if (auto code = core::parse_command_line(app, argc, argv)) return *code;
  // A bad --json path is refused before the GPU is asked for, not after the measurements.
  if (!json_path.empty()) core::check_output_path("--json", json_path);

  const core::DeviceInfo device = core::require_gpu(device_index);
  const probe::Measured m = probe::measure_ceilings(device);
  const probe::Ceilings& c = m.ceilings;
  for (double rate : {c.sfu_per_s, c.fp32_flop_per_s, c.fp16_flop_per_s, c.copy_bytes_per_s, c.h2d_pinned_bytes_per_s,
                      c.tf32_tensor_flop_per_s, c.bf16_tensor_flop_per_s})
    if (!(rate > 0) || !std::isfinite(rate)) throw core::RuntimeError("probe measured a non-positive or non-finite rate");
  const double per_sm_clk = 1e6 * device.sms * device.clock_mhz;
  if (!quiet) {
    printf("stepwise_probe on %s (%d SMs, %d MHz, sm_%s)\n", device.name.c_str(), device.sms, device.clock_mhz, device.sm.c_str());
    printf("  SFU sin/cos   %.3g /s   (%.1f per SM per clock)\n", c.sfu_per_s, c.sfu_per_s / per_sm_clk);
    printf("  FP32 FFMA     %.3g flop/s (%.1f FFMA per SM per clock)\n", c.fp32_flop_per_s, c.fp32_flop_per_s / 2 / per_sm_clk);
    printf("  half2 HFMA2   %.3g flop/s (%.1f HFMA2 per SM per clock)\n", c.fp16_flop_per_s, c.fp16_flop_per_s / 4 / per_sm_clk);
    printf("  copy          %.3g bytes/s (read + write)\n", c.copy_bytes_per_s);
    printf("  H2D pinned    %.3g bytes/s\n", c.h2d_pinned_bytes_per_s);
    printf("  TF32 mma.sync %.3g flop/s\n  BF16 mma.sync %.3g flop/s\n", c.tf32_tensor_flop_per_s, c.bf16_tensor_flop_per_s);
  }
  if (!json_path.empty()) {
    core::json r = core::new_record("probe", "ceilings");
    r["device"] = core::device_json(device);
    r["ceilings"] = {{"sfu_per_s", c.sfu_per_s},
                     {"fp32_flop_per_s", c.fp32_flop_per_s},
                     {"fp16_flop_per_s", c.fp16_flop_per_s},
                     {"copy_bytes_per_s", c.copy_bytes_per_s},
                     {"h2d_pinned_bytes_per_s", c.h2d_pinned_bytes_per_s},
                     {"tf32_tensor_flop_per_s", c.tf32_tensor_flop_per_s},
                     {"bf16_tensor_flop_per_s", c.bf16_tensor_flop_per_s}};
    const probe::BestTimes& t = m.ms;
    r["timing"] = {{"sfu_ms", t.sfu_ms}, {"fma_ms", t.fma_ms}, {"hfma2_ms", t.hfma2_ms}, {"copy_ms", t.copy_ms}, {"h2d_ms", t.h2d_ms},
                   {"tf32_mma_ms", t.tf32_mma_ms}, {"bf16_mma_ms", t.bf16_mma_ms}};
    core::append_record(json_path, r);
  }
  return core::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] { return run(argc, argv); });
}
