// mri_recon: the image the F^H d and Q kernels exist for. --method ls solves
// (F^H F + lambda W^H W) rho = F^H d by conjugate gradient (recon.hpp), with F^H d
// and Q from the steps named by --fhd-step and --q-step, on the GPU (--solver gpu,
// recon_gpu.hpp) or the CPU; --method gridding is the
// density-compensated F^H d by the adjoint NUFFT (recon_model.hpp). The data are the object's
// transform (--data object, blurred by --blur voxels) or the ladder's d = phi F (--data
// ladder); both images are compared with the image the data describe, the object averaged
// over each voxel's box (recon_model.hpp).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <tuple>
#include <unistd.h>

#include "core/cli.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "gridding.hpp"
#include "core/metrics.hpp"
#include "core/npy.hpp"
#include "mri/problem.hpp"
#include "recon.hpp"
#include "recon_gpu.hpp"
#include "recon_model.hpp"
#include "core/results.hpp"
#include "core/timing.hpp"

namespace {

struct Options {
  std::string size = "small", method = "ls", fhd_step = "cpu-single", q_step = "cpu-single", data = "object", solver;
  std::string json_path, out, tag;
  uint64_t seed = 1;
  double noise = 1e-4, lambda = 3000, oversampling = 2.0, blur = 1;
  int undersample = 1, iterations = 50, kernel_width = 4;
  bool quiet = false, diagnose = false;
};

int run(int argc, char** argv) {
  Options o;
  CLI::App app{"mri_recon: least-squares (CG, Toeplitz F^H F) or gridding reconstruction of the phantom problem",
               "mri_recon"};
  app.add_option("--size", o.size, "Problem: tiny, small or large")->check(CLI::IsMember({"tiny", "small", "large"}))->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of the trajectory and the noise")->capture_default_str();
  app.add_option("--noise", o.noise, "Complex Gaussian noise per sample (fraction of |d(0)|)")->check(core::FiniteRange(0, 10))->capture_default_str();
  app.add_option("--undersample", o.undersample, "Keep every R-th spiral arm (R times the Nyquist spacing)")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--data", o.data, "k-space data: object (the object's transform F(k), blurred by --blur) or ladder (the ladder's d = phi F)")
      ->check(CLI::IsMember({"object", "ladder"}))->capture_default_str();
  auto* blur_opt = app.add_option("--blur", o.blur, "Gaussian blur of the object, standard deviation in voxels (--data object; 0: the sharp phantom)")
      ->check(core::FiniteRange(0, 8))->capture_default_str();
  app.add_option("--method", o.method, "ls (conjugate gradient), gridding (density-compensated F^H d) or gridding-plain (w d, no conj(phi))")
      ->check(CLI::IsMember({"ls", "gridding", "gridding-plain"}))->capture_default_str();
  app.add_option("--iterations", o.iterations, "CG iterations")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--lambda", o.lambda, "Weight of the finite-difference penalty lambda ||W rho||^2")->check(core::FiniteRange(0, 1e12))->capture_default_str();
  app.add_option("--fhd-step", o.fhd_step, "What computes F^H d: cpu-double, cpu-single, nufft, or a ladder step by id (03_gather on, e.g. 10_phase_recurrence or 16_fixed_point: its program, run on the problem)")->capture_default_str();
  app.add_option("--q-step", o.q_step, "What computes Q on the 2x grid: cpu-double, cpu-single, nufft, or a ladder step by id")->capture_default_str();
  auto* solver_opt = app.add_option("--solver", o.solver, "Where CG runs: cpu (FFTW) or gpu (cuFFT, complex double; exit 77 without a GPU). "
                                    "Default: gpu where this program was built with CUDA and a GPU is present, else cpu")
      ->check(CLI::IsMember({"cpu", "gpu"}));
  app.add_option("--kernel-width", o.kernel_width, "Gridding: Kaiser-Bessel kernel width W (grid cells)")->check(CLI::Range(2, 16))->capture_default_str();
  app.add_option("--oversampling", o.oversampling, "Gridding: grid oversampling sigma")->check(core::FiniteRange(1.25, 4))->capture_default_str();
  app.add_option("--json", o.json_path, "Append a results record (JSON line) to this file");
  app.add_option("--out", o.out, "Write the image (complex64 .npy, z y x)");
  app.add_option("--tag", o.tag, "Label of the results record");
  app.add_flag("--diagnose", o.diagnose, "Also compare with the sharp phantom's box shifted by -1/2 and -1 voxel per axis");
  app.add_flag("--quiet", o.quiet, "Print the summary only");
  if (auto code = core::parse_command_line(app, argc, argv)) return *code;
  if (!o.json_path.empty()) core::check_output_path("--json", o.json_path);
  if (!o.out.empty()) core::check_output_path("--out", o.out);
  // Unknown step names are bad usage before any work.
  mri::SumTiming fhd_timing, q_timing;  // what a step program says of its own run
  const mri::SumStep fhd_step = mri::recon_sum_step(o.fhd_step, "--fhd-step", &fhd_timing);
  const mri::SumStep q_step = mri::recon_sum_step(o.q_step, "--q-step", &q_timing);
  const mri::GriddingParams gp{o.kernel_width, o.oversampling};
  const bool gridding = o.method != "ls";
  if (gridding) mri::kaiser_bessel_beta(gp.width, gp.oversampling);
  if (gridding && solver_opt->count() > 0) throw core::UsageError("--solver applies to --method ls only (gridding has no solver)");
  // At the paper's scale the direct sums are the GPU's work: Q on 128^3 voxels and F^H d on
  // 64^3 by a CPU loop would take hours (6.7e12 and 8.4e11 voxel-sample pairs).
  if (o.size == "large" && !gridding)
    for (const auto& [flag, name, what] : {std::tuple{"--q-step", o.q_step, "Q on 128^3 voxels"},
                                           std::tuple{"--fhd-step", o.fhd_step, "F^H d on 64^3 voxels"}})
      if (mri::direct_sum_on_cpu(name))
        throw core::UsageError(std::string("--size large with --method ls: ") + flag + " " + name + " computes " + what +
                               " by the direct sum on the CPU: the GPU scale, hours on a CPU. Use a GPU ladder step (e.g. " +
                               flag + " 10_phase_recurrence), nufft, or --size small.");
  // Where CG runs, settled before any work: --solver gpu without a GPU (or without CUDA in
  // this build) is exit 77 at once, not after minutes of Q.
  // The CUDA context is made here and timed apart (context_ms): a process pays it once.
  core::DeviceInfo device;
  double context_ms = 0;
  const core::HostClock context_clock;
  if (!gridding) {
    if (solver_opt->count() == 0) {
      o.solver = "cpu";
      if (mri::gpu_solver_built()) try {
          device = core::require_gpu(0);
          o.solver = "gpu";
        } catch (const core::NoGpuError&) {
        }
    } else if (o.solver == "gpu") {
      device = core::require_gpu(0);
    }
  }
  context_ms = context_clock.elapsed_ms();
  const bool gpu_solver = o.solver == "gpu";
  mri::ReconSpec spec;
  spec.size = o.size; spec.seed = o.seed; spec.noise = o.noise; spec.undersample = o.undersample;
  spec.data = o.data == "ladder" ? mri::ReconData::ladder : mri::ReconData::object;
  if (spec.data == mri::ReconData::ladder && blur_opt->count() > 0 && o.blur != 0)
    throw core::UsageError("--blur applies to --data object only (the ladder's data are as generated)");
  spec.blur = spec.data == mri::ReconData::object ? o.blur : 0;  // the ladder's data are not blurred

  const mri::Problem p = mri::recon_problem(spec);
  const bool tty = isatty(fileno(stdout));
  if (!o.quiet)
    printf("mri_recon  method=%s  problem=%s (%zu samples x %zu voxels, %s data, blur %g voxels, noise %g, undersample %d)\n",
           o.method.c_str(), p.name.c_str(), p.samples(), p.voxels(), o.data.c_str(), spec.blur, o.noise, o.undersample);

  // The GPU solver's grid part (the cuFFT plan of the (2n)^3 grid, the device arrays) depends on
  // the image size only: made once, before the sums, and timed apart (solver_init_ms), as a
  // reconstruction service makes it once for all its images. Q's part comes after Q.
  std::unique_ptr<mri::GpuNormalOperator> gpu_operator;
  double solver_init_ms = 0;
  if (gpu_solver && o.method == "ls") {
    const core::HostClock init_clock;
    gpu_operator = std::make_unique<mri::GpuNormalOperator>(p.grid, o.lambda);
    solver_init_ms = init_clock.elapsed_ms();
  }

  // Q and F^H d: a ladder step's program counts from its own record (its timed run after a
  // warm-up: the copies, the binning plan and the kernels; its start, its context, its first
  // run's one-time costs and its harness's validation of the output not, those recorded
  // apart), everything else as mri_recon's wall clock saw it. The wall times are recorded
  // beside them.
  double q_ms = 0, fhd_ms = 0, q_wall_ms = 0, fhd_wall_ms = 0, solver_ms = 0, solver_setup_ms = 0;
  mri::cvec rho;
  std::vector<double> residuals;
  // Each stage says when it starts, so that a long one is not silence.
  const auto stage = [&](const std::string& what) {
    if (o.quiet) return;
    printf("  ...     %s\n", what.c_str());
    fflush(stdout);
  };
  if (o.method == "ls") {
    stage("F^H d by " + o.fhd_step);
    core::HostClock t0;
    const mri::cvec fhd = fhd_step(p, mri::Kernel::fhd);
    fhd_wall_ms = t0.elapsed_ms();
    fhd_ms = std::isnan(fhd_timing.step_ms) ? fhd_wall_ms : fhd_timing.step_ms;
    stage("Q on the 2x grid by " + o.q_step);
    t0 = core::HostClock();
    const mri::cvec q = q_step(mri::toeplitz_problem(p), mri::Kernel::q);
    q_wall_ms = t0.elapsed_ms();
    q_ms = std::isnan(q_timing.step_ms) ? q_wall_ms : q_timing.step_ms;
    const auto progress = [&](int it, double rel) {
      if (o.quiet) return;
      if (tty) printf("\r  CG iteration %d/%d  relative residual %.3e", it, o.iterations, rel);
      else printf("  CG iteration %d  relative residual %.3e\n", it, rel);
      fflush(stdout);
    };
    if (!o.quiet)
      printf("  solver  %s\n", gpu_solver ? ("gpu, " + device.name + ", cuFFT Z2Z (complex double)").c_str() : "cpu, FFTW (complex double)");
    // The solver's time is everything from Q and F^H d on the host to the image on the host:
    // for the GPU Q's upload and transform (setup), b's upload, the iterations and the image's
    // download; the plan was made before (solver_init_ms).
    t0 = core::HostClock();
    mri::CgResult cg;
    if (gpu_solver) {
      gpu_operator->set_kernel(q);
      solver_setup_ms = t0.elapsed_ms();
      cg = mri::conjugate_gradient_gpu(*gpu_operator, fhd, o.iterations, progress);
    } else {
      const mri::Toeplitz fhf(p.grid, q);
      solver_setup_ms = t0.elapsed_ms();
      cg = mri::conjugate_gradient(fhf, o.lambda, fhd, o.iterations, progress);
    }
    if (tty && !o.quiet) printf("\n");
    solver_ms = t0.elapsed_ms();
    // phi is the voxel box's transform scaled to 1 at k = 0, the transform of a box of height
    // N (the voxel count): F rho is the transform of sum_n N rho_n box_n, so rho comes out as
    // the density / N.
    rho = cg.rho;
    for (auto& v : rho) v *= double(p.voxels());
    residuals = cg.residuals;
  } else {
    stage("gridding");
    const core::HostClock t0;
    rho = o.method == "gridding" ? mri::gridding_image(p, gp) : mri::gridding_recon(p, gp);
    fhd_wall_ms = fhd_ms = t0.elapsed_ms();
  }
  // Per image: what each further reconstruction of this size costs a process that has its
  // context and plans. Once: what a fresh process pays besides, all of it measured (the
  // contexts, the solver's plan, each step program's context and first-run excess). The first
  // image of a fresh process is the sum; both are printed and recorded.
  const double total_ms = q_ms + fhd_ms + solver_ms;
  const double one_time_ms = context_ms + solver_init_ms + (std::isnan(q_timing.first_ms) ? 0 : q_timing.one_time_ms()) +
                             (std::isnan(fhd_timing.first_ms) ? 0 : fhd_timing.one_time_ms());

  stage("the true image, to compare with");
  const core::HostClock truth_clock;
  const mri::cvec truth = mri::recon_true_image(p, spec.blur);
  const double truth_ms = truth_clock.elapsed_ms();
  const core::ErrorMetrics m = core::compare(truth, rho);
  printf("  image   vs true image: relative error %.2f %%, PSNR %.2f dB\n", 100 * m.rel_l2, m.psnr_db);
  core::json diagnostics;
  if (o.diagnose)
    for (double offset : {-0.5, -1.0}) {
      const core::ErrorMetrics s = core::compare(mri::shifted_box_image(p, offset), rho);
      printf("  image   vs the sharp phantom's box shifted %g voxel per axis: relative error %.2f %%, PSNR %.2f dB\n", offset,
             100 * s.rel_l2, s.psnr_db);
      diagnostics.push_back({{"box_offset_voxels", offset}, {"rel_l2", s.rel_l2}, {"psnr_db", s.psnr_db}});
    }
  if (gridding) printf("  time    gridding %.1f ms\n", fhd_ms);
  else {
    printf("  time    Q %.1f ms, F^H d %.1f ms, solver (%s) %.1f ms (setup %.1f ms), total %.1f ms per image\n", q_ms, fhd_ms,
           o.solver.c_str(), solver_ms, solver_setup_ms, total_ms);
    if (gpu_solver || !std::isnan(q_timing.first_ms) || !std::isnan(fhd_timing.first_ms))
      printf("  once    %.1f ms (context %.1f ms, solver plan %.1f ms, step programs %.1f ms): the first image of a fresh "
             "process %.1f ms\n", one_time_ms, context_ms, solver_init_ms, one_time_ms - context_ms - solver_init_ms,
             total_ms + one_time_ms);
    for (const auto& [what, t] : {std::pair<const char*, const mri::SumTiming&>{"Q", q_timing}, {"F^H d", fhd_timing}})
      if (!std::isnan(t.upload_ms))  // a gridding step's program: its run in phases
        printf("  %-7s load %.2f (upload %.2f, plan %.2f, grid %.2f), spread %.3f, fft %.3f, deapodize %.3f, store %.2f ms;"
               " first run %.1f ms, context %.1f ms\n", what, t.load_ms, t.upload_ms, t.plan_ms, t.prepare_ms, t.spread_ms,
               t.fft_ms, t.deapodize_ms, t.store_ms, t.first_ms, t.device_setup_ms);
      else if (!std::isnan(t.first_ms))
        printf("  %-7s load %.2f, compute %.2f, store %.2f ms; first run %.1f ms\n", what, t.load_ms, t.kernel_ms, t.store_ms,
               t.first_ms);
    if (gpu_operator) {
      const auto& st = gpu_operator->setup_timing();
      printf("  solver  plan %.1f ms (once), Q upload %.2f ms, Q transform %.2f ms, CG %.1f ms\n", st.plan_ms, st.upload_ms,
             st.transform_ms, solver_ms - solver_setup_ms);
    }
  }
  if (!gridding && (q_wall_ms != q_ms || fhd_wall_ms != fhd_ms))
    printf("  wall    Q %.1f ms, F^H d %.1f ms: the step programs with their start, the problem written for them and their output read back\n",
           q_wall_ms, fhd_wall_ms);
  if (!residuals.empty()) printf("  CG      %zu iterations, final relative residual %.3e\n", residuals.size(), residuals.back());

  if (!o.out.empty()) {
    std::vector<std::complex<float>> img(rho.begin(), rho.end());
    core::write_npy(o.out, {size_t(p.grid[2]), size_t(p.grid[1]), size_t(p.grid[0])}, img.data());
  }
  if (!o.json_path.empty()) {
    core::json r = core::new_record("mri", "recon");
    r["title"] = o.method == "ls" ? "least squares, conjugate gradient"
                 : o.method == "gridding" ? "gridding, density-compensated F^H d, Kaiser-Bessel"
                                          : "gridding of w d (no conj(phi)), Kaiser-Bessel";
    // A GPU record where CG ran on the GPU (the step programs that computed the sums name no
    // device here, as before).
    r["kind"] = gpu_solver ? "gpu" : "cpu";
    r["device"] = gpu_solver ? core::device_json(device) : core::json(nullptr);
    r["problem"] = {{"name", p.name}, {"params", p.params}, {"digest", p.digest()}};
    core::json params = {{"method", o.method}, {"data", o.data}, {"blur_voxels", spec.blur}};
    if (o.method == "ls")
      params.update({{"iterations", o.iterations}, {"lambda", o.lambda}, {"fhd_step", o.fhd_step}, {"q_step", o.q_step},
                     {"solver", o.solver}, {"solver_precision", "complex double"}});
    else
      params.update({{"kernel_width", o.kernel_width}, {"oversampling", o.oversampling},
                     {"grid", mri::oversampled_size(p.grid[0], o.oversampling)}, {"density", "analytic spiral"},
                     {"weights", o.method == "gridding" ? "w conj(phi) d" : "w d"}});
    r["params"] = params;
    // One run: the medians are the run itself. kernel_ms is the image's own work (solver or gridding).
    const auto one = [](double v) { return core::json{{"median", v}, {"runs", 1}}; };
    r["timing"] = {{"kernel_ms", one(o.method == "ls" ? solver_ms : fhd_ms)}, {"total_ms", one(total_ms)},
                   {"q_ms", q_ms}, {"fhd_ms", fhd_ms}, {"solver_ms", solver_ms}, {"truth_ms", truth_ms}};
    if (!gridding) {
      r["timing"]["solver_setup_ms"] = solver_setup_ms;
      r["timing"]["q_wall_ms"] = q_wall_ms;
      r["timing"]["fhd_wall_ms"] = fhd_wall_ms;
      if (!std::isnan(q_timing.kernel_ms)) r["timing"]["q_kernel_ms"] = q_timing.kernel_ms;
      if (!std::isnan(fhd_timing.kernel_ms)) r["timing"]["fhd_kernel_ms"] = fhd_timing.kernel_ms;
      r["timing"]["context_ms"] = context_ms;
      r["timing"]["one_time_ms"] = one_time_ms;
      r["timing"]["first_image_ms"] = total_ms + one_time_ms;
      // Each step program's run broken down (a key only where the program recorded it).
      for (const auto& [prefix, t] : {std::pair<std::string, const mri::SumTiming&>{"q", q_timing}, {"fhd", fhd_timing}}) {
        if (std::isnan(t.first_ms)) continue;
        core::json phases;
        for (const auto& [key, v] : {std::pair<const char*, double>{"first_run", t.first_ms}, {"device_setup", t.device_setup_ms},
                                     {"load", t.load_ms}, {"upload", t.upload_ms}, {"plan", t.plan_ms},
                                     {"prepare", t.prepare_ms}, {"fft_plan", t.fft_plan_ms}, {"spread", t.spread_ms},
                                     {"fft", t.fft_ms}, {"deapodize", t.deapodize_ms}, {"store", t.store_ms}})
          if (!std::isnan(v)) phases[key] = v;
        r["timing"][prefix + "_phases_ms"] = phases;
      }
      if (gpu_operator) {
        const auto& st = gpu_operator->setup_timing();
        r["timing"]["solver_init_ms"] = solver_init_ms;
        r["timing"]["solver_phases_ms"] = {{"plan", st.plan_ms}, {"q_upload", st.upload_ms}, {"q_transform", st.transform_ms},
                                           {"cg", solver_ms - solver_setup_ms}};
      }
    }
    r["throughput"] = {{"value", 1e3 / total_ms}, {"unit", "images/s"}};
    r["validation"] = {{"reference", spec.blur > 0 ? "blurred object, voxel box average" : "phantom, voxel box average"},
                       {"pass", m.finite}, {"psnr_db", m.psnr_db},
                       {"rel_l2", m.rel_l2}, {"rel_error_pct", 100 * m.rel_l2}, {"max_abs", m.max_abs}};
    // The central plane (z = n/2) of the image and of the true image, real parts, 4 significant
    // digits: what the report's montage shows (a picture; the metrics above are the measure).
    const auto plane = [&](const mri::cvec& img) {
      const size_t nx = size_t(p.grid[0]), ny = size_t(p.grid[1]), z = size_t(p.grid[2] / 2);
      core::json rows = core::json::array();
      for (size_t y = 0; y < ny; ++y) {
        core::json row = core::json::array();
        for (size_t x = 0; x < nx; ++x) {
          const double v = img[(z * ny + y) * nx + x].real();
          char digits[32];
          snprintf(digits, sizeof digits, "%.4g", v);
          row.push_back(std::strtod(digits, nullptr));
        }
        rows.push_back(row);
      }
      return rows;
    };
    r["slice"] = {{"z", p.grid[2] / 2}, {"image", plane(rho)}, {"true", plane(truth)}};
    if (o.diagnose) r["diagnostics"] = diagnostics;
    if (!residuals.empty()) r["residuals"] = residuals;
    if (!o.tag.empty()) r["tag"] = o.tag;
    core::append_record(o.json_path, r);
  }
  return m.finite ? core::kOk : core::kValidationFailed;
}

}  // namespace

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&] { return run(argc, argv); });
}
