// The MRI harness: main() of every MRI step program, on the shared loop (core/harness.hpp).
// What is MRI's own: the --kernel and input flags, the problem (generated, a folder or a
// Parboil file), validation against the CPU double reference or a Parboil output, and the
// output as a complex64 volume.
#include <cstdio>

#include "core/error.hpp"
#include "core/harness.hpp"
#include "core/npy.hpp"
#include "core/nvtx.hpp"
#include "mri/problem.hpp"
#include "mri/step.hpp"
#include "mri/validation.hpp"

namespace mri {
namespace {

class MriTrack final : public core::Track {
 public:
  explicit MriTrack(Accuracy accuracy) : accuracy_(accuracy) {}

  void add_options(CLI::App& app) override {
    app.add_option("--kernel", kernel_name_, "fhd (F^H d) or q (Q)")->check(CLI::IsMember({"fhd", "q"}))->capture_default_str();
    app.add_option("--input-parboil", parboil_input_, "Parboil mri-q input file (Q only)");
    app.add_option("--expect-parboil", parboil_expect_, "Parboil mri-q reference output: validate against it with Parboil's tolerance");
    app.add_option("--noise", noise_, "Complex Gaussian noise on the generated data (fraction of |d(0)|)")->check(CLI::Range(0.0, 10.0));
    // A caller that checks the output itself (mri_recon compares its image with the true one)
    // need not pay for the reference: on a large problem it costs seconds, the step milliseconds.
    CLI::Option* skip = app.add_flag("--no-validation", no_validation_,
                                     "With --out or --json: write them without validating against the reference (the record says so)");
    if (CLI::Option* check = app.get_option_no_throw("--check")) skip->excludes(check);
    app.add_option("--samples", samples_, "Keep only the first N k-space samples of the --size problem: tuning sweeps keep the full voxel grid at a fraction of the time")->check(CLI::Range(size_t(1), kMaxSamples));
  }

  void prepare(const core::CoreOptions& o, const core::Tunables& tunables, bool gpu, const std::string& program) override {
    kernel_ = kernel_name_ == "q" ? Kernel::q : Kernel::fhd;
    if (!parboil_expect_.empty() && parboil_input_.empty()) throw core::UsageError("--expect-parboil needs --input-parboil");
    p_ = load_problem(o, gpu, program);
    if (kernel_ == Kernel::fhd && !p_.has_data())
      throw core::UsageError(p_.name + ": has no k-space data d (a Parboil mri-q input); use --kernel q");
    in_ = {kernel_, int(p_.samples()), int(p_.voxels()),
           p_.kx.data(), p_.ky.data(), p_.kz.data(), p_.phiR.data(), p_.phiI.data(),
           p_.has_data() ? p_.dR.data() : nullptr, p_.has_data() ? p_.dI.data() : nullptr,
           p_.x.data(), p_.y.data(), p_.z.data(), p_.grid[0], p_.grid[1], p_.grid[2]};
    outR_.assign(p_.voxels(), 0.0f);
    outI_.assign(p_.voxels(), 0.0f);
    // The tolerance class checks the error against what the step was asked for.
    tolerance_ = accuracy_ == Accuracy::tolerance ? core::real_tunable(tunables, "tolerance") : 0;
    step_ = make_step(tunables);
  }

  core::Phases phases() override {
    return {[this] { core::NvtxRange r("load"); step_->load(in_); },
            [this] { core::NvtxRange r("compute"); step_->compute(); },
            [this] { core::NvtxRange r("store"); step_->store(outR_.data(), outI_.data()); }};
  }

  bool validation_skipped() const override { return no_validation_; }

  std::string describe() const override {
    char text[256];
    snprintf(text, sizeof text, "kernel=%s  problem=%s (%zu samples x %zu voxels)", kernel_name(kernel_),
             p_.name.c_str(), p_.samples(), p_.voxels());
    return text;
  }

  core::json problem_json() const override { return {{"name", p_.name}, {"params", p_.params}, {"digest", p_.digest()}}; }

  void describe_params(core::json& params) const override {
    params["kernel"] = kernel_name(kernel_);
    params["accuracy"] = accuracy_name(accuracy_);
    core::Fields fields(params);
    step_->describe(fields);
  }

  core::Rate rate(double kernel_ms) const override {
    const double pairs = double(p_.samples()) * double(p_.voxels());
    // 14 FP32 operations per pair besides the sine and cosine: 5 for the phase k.x,
    // 1 for the 2 pi, 8 for the complex multiply-accumulate.
    return {{{"unit", "pairs"}, {"count", pairs}, {"flop", 14 * pairs}, {"sincos", pairs}},
            pairs / (kernel_ms * 1e-3), "pairs/s"};
  }

  core::Verdict validate(const core::CoreOptions& o) override {
    const bool parboil = !parboil_expect_.empty();
    const Verdict v = parboil ? validate_parboil(load_parboil_output(parboil_expect_, p_.voxels()), outR_.data(), outI_.data())
                              : mri::validate(p_, kernel_, accuracy_, outR_.data(), outI_.data(), o.seed, tolerance_);
    core::Verdict out;
    out.pass = v.pass;
    out.record = core::validation_json(v.reference, v.metrics, v.pass);
    out.record["threshold"] = v.threshold;
    if (!parboil)
      out.record["kspace"] = {{"residual", v.kspace}, {"limit", v.kspace_limit}, {"sample", v.kspace_sample}, {"limits_of", v.limits}};
    char line[640];
    char kspace[160] = "";
    if (!parboil)
      snprintf(kspace, sizeof kspace, ", k-space residual %.3g (limit %.3g; limits of %s)", v.kspace, v.kspace_limit, v.limits.c_str());
    snprintf(line, sizeof line, "  check   %s vs %s on %zu voxels: rel_l2 %.3g (limit %.3g)%s, max_abs %.3g, PSNR %.1f dB%s\n",
             v.pass ? "PASS" : "FAIL", v.reference.c_str(), v.metrics.count, v.metrics.rel_l2,
             parboil ? 0.0 : v.threshold, kspace, v.metrics.max_abs, v.metrics.psnr_db,
             parboil ? (", " + std::to_string(v.failures) + " components outside Parboil's tolerance").c_str() : "");
    out.summary = line;
    if (parboil) snprintf(line, sizeof line, "rel_l2 %.3g", v.metrics.rel_l2);
    else snprintf(line, sizeof line, "rel_l2 %.3g, k-space residual %.3g", v.metrics.rel_l2, v.kspace);
    out.failure = line;
    return out;
  }

  void write_output(const std::string& path, const core::Verdict&) override {
    std::vector<std::complex<float>> out(p_.voxels());
    for (size_t i = 0; i < out.size(); ++i) out[i] = {outR_[i], outI_[i]};
    const std::vector<size_t> shape = p_.grid[0] ? std::vector<size_t>{size_t(p_.grid[2]), size_t(p_.grid[1]), size_t(p_.grid[0])}
                                                 : std::vector<size_t>{p_.voxels()};
    core::write_npy(path, shape, out.data());
  }

 private:
  Problem load_problem(const core::CoreOptions& o, bool gpu, const std::string& program) const {
    const int sources = !o.input.empty() + !parboil_input_.empty();
    if (sources > 1) throw core::UsageError("--input and --input-parboil are exclusive");
    if (sources > 0 && samples_) throw core::UsageError("--samples applies to the built-in --size problems only");
    if (!parboil_input_.empty()) return load_parboil(parboil_input_);
    if (!o.input.empty()) return load_folder(o.input);
    if (o.size == "large" && !gpu && samples_ == 0)
      throw core::UsageError("--size large is the GPU scale (8.4e11 voxel-sample pairs); " + program +
                             " would take hours on a CPU. Use --size small.");
    return generate(o.size, o.seed, noise_, samples_);
  }

  Accuracy accuracy_;
  std::string kernel_name_ = "fhd", parboil_input_, parboil_expect_;
  double noise_ = 0;
  bool no_validation_ = false;
  double tolerance_ = 0;  // the tolerance class's limit (the step's --tolerance)
  size_t samples_ = 0;  // 0: all
  Kernel kernel_ = Kernel::fhd;
  Problem p_;
  Inputs in_{};
  std::vector<float> outR_, outI_;
  std::unique_ptr<Step> step_;
};

}  // namespace
}  // namespace mri

int main(int argc, char** argv) {
  const mri::StepInfo info = mri::step_info();
  mri::MriTrack track(info.accuracy);
  return core::run_step_program(track, {"mri", info.id, info.title, info.gpu, info.tunables, info.flag_defaults, info.multi_gpu}, argc, argv);
}
