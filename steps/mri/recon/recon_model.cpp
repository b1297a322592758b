#include "recon_model.hpp"

#include <fftw3.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cmath>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "mri/phantom.hpp"
#include "core/portable.hpp"
#include "core/results.hpp"

namespace mri {

using cplx = std::complex<double>;

namespace {

std::string number(double v) {  // 1 -> "1", 0.5 -> "0.5"
  char buf[32];
  snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double sinc(double u) { return std::abs(u) < 1e-12 ? 1.0 : std::sin(core::kPi * u) / (core::kPi * u); }

// The voxel box's transform, as the generator writes phi (common/mri/problem.cpp), in double.
cplx box_transform(double kx, double ky, double kz, const std::array<int, 3>& n) {
  const double wx = 1.0 / n[0], wy = 1.0 / n[1], wz = 1.0 / n[2];
  return sinc(kx * wx) * sinc(ky * wy) * sinc(kz * wz) * std::polar(1.0, -core::kPi * (kx * wx + ky * wy + kz * wz));
}

// The Gaussian blur of `blur` voxels: G(k) = exp(-2 pi^2 sum_a (blur k_a / n_a)^2).
double blur_transform(double kx, double ky, double kz, double blur, const std::array<int, 3>& n) {
  const double ax = blur * kx / n[0], ay = blur * ky / n[1], az = blur * kz / n[2];
  return std::exp(-2 * core::kPi * core::kPi * (ax * ax + ay * ay + az * az));
}

}  // namespace

Problem recon_problem(const ReconSpec& s) {
  if (!(s.blur >= 0) || s.blur > 8) throw core::UsageError("--blur must be in [0, 8] voxels");
  if (s.data == ReconData::ladder) {
    if (s.blur != 0) throw core::UsageError("--blur applies to --data object only (the ladder's data are as generated)");
    return generate(s.size, s.seed, s.noise, 0, s.undersample);
  }
  // The trajectory, phi and voxels of the ladder's problem; its data are replaced.
  Problem p = generate(s.size, s.seed, 0, 0, s.undersample);
  p.name += "-object";
  if (s.blur > 0) p.name += "-blur" + number(s.blur);
  // The generator's noise (mri::sample_noise), so that object and ladder data of one seed carry
  // the same noise; then each sample is its own work, in parallel, the same bit for bit.
  const std::vector<std::complex<double>> noises = mri::sample_noise(s.seed, s.noise > 0 ? p.samples() : 0);
  const double scale = std::abs(phantom_transform(0, 0, 0));
#pragma omp parallel for schedule(static)
  for (size_t m = 0; m < p.samples(); ++m) {
    const double kx = p.kx[m], ky = p.ky[m], kz = p.kz[m];
    std::complex<double> d = phantom_transform(kx, ky, kz) * blur_transform(kx, ky, kz, s.blur, p.grid);
    if (s.noise > 0) d += s.noise * scale * noises[m] / std::sqrt(2.0);
    p.dR[m] = float(d.real());
    p.dI[m] = float(d.imag());
  }
  p.params["noise"] = s.noise;
  p.params["data"] = "object";  // d = F(k) G(k) + noise
  p.params["blur_voxels"] = s.blur;
  return p;
}

cvec recon_true_image(const Problem& p, double blur) {
  if (p.grid[0] == 0) throw core::UsageError(p.name + ": the voxels are not a Cartesian grid");
  if (blur == 0) return true_image(p);
  const std::array<int, 3> n = p.grid;
  constexpr int L = 2;  // the period: the blurred object lies well inside [-1, 1)^3
  int P[3], J[3];
  for (int a = 0; a < 3; ++a) {
    P[a] = L * n[a];
    // G < 1e-12 beyond |k_a| = K_a: 2 pi^2 (blur K / n)^2 = 27.7.
    const double K = std::sqrt(27.7 / (2 * core::kPi * core::kPi)) * n[a] / blur;
    J[a] = int(std::ceil(K * L));  // j in [-J, J]
  }
  const size_t cells = size_t(P[0]) * P[1] * P[2];
  cvec acc(cells);
#pragma omp parallel
  {
    cvec mine(cells);
#pragma omp for schedule(dynamic)
    for (int jz = -J[2]; jz <= J[2]; ++jz)
      for (int jy = -J[1]; jy <= J[1]; ++jy)
        for (int jx = -J[0]; jx <= J[0]; ++jx) {
          const double kx = double(jx) / L, ky = double(jy) / L, kz = double(jz) / L;
          const double g = blur_transform(kx, ky, kz, blur, n);
          if (g < 1e-12) continue;
          // e^{i 2 pi k x_n} with x_n = (i - h)/n, h = n/2 (integer): e^{i 2 pi j i / P} e^{-i 2 pi j h / P}.
          const double shift = double(jx) * (n[0] / 2) / P[0] + double(jy) * (n[1] / 2) / P[1] + double(jz) * (n[2] / 2) / P[2];
          const cplx v = phantom_transform(kx, ky, kz) * g * std::conj(box_transform(kx, ky, kz, n)) *
                         std::polar(1.0, -2 * core::kPi * shift);
          const size_t c = (size_t(((jz % P[2]) + P[2]) % P[2]) * P[1] + ((jy % P[1]) + P[1]) % P[1]) * P[0] +
                           ((jx % P[0]) + P[0]) % P[0];
          mine[c] += v;
        }
#pragma omp critical
    for (size_t c = 0; c < cells; ++c) acc[c] += mine[c];
  }
  fftw_complex* buf = fftw_alloc_complex(cells);
  if (!buf) throw std::bad_alloc();
  for (size_t c = 0; c < cells; ++c) { buf[c][0] = acc[c].real(); buf[c][1] = acc[c].imag(); }
  fftw_plan plan = fftw_plan_dft_3d(P[2], P[1], P[0], buf, buf, FFTW_BACKWARD, FFTW_ESTIMATE);
  fftw_execute(plan);
  fftw_destroy_plan(plan);
  cvec out(p.voxels());
  for (int iz = 0; iz < n[2]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[0]; ++ix) {
        const size_t c = (size_t(iz) * P[1] + iy) * P[0] + ix;
        out[(size_t(iz) * n[1] + iy) * n[0] + ix] = cplx(buf[c][0], buf[c][1]) / double(L * L * L);
      }
  fftw_free(buf);
  return out;
}

cvec gridding_image(const Problem& p, const GriddingParams& g) {
  if (!p.has_data()) throw core::UsageError(p.name + ": has no k-space data d");
  const std::vector<double> w = spiral_density(p);
  std::vector<cplx> c(p.samples());
  for (size_t m = 0; m < c.size(); ++m) c[m] = w[m] * std::conj(cplx(p.phiR[m], p.phiI[m])) * cplx(p.dR[m], p.dI[m]);
  return gridding_adjoint(p, c, g);
}

cvec nufft_sums(const Problem& p, Kernel kernel) {
  std::vector<cplx> c(p.samples());
  for (size_t m = 0; m < c.size(); ++m) {
    const cplx phi(p.phiR[m], p.phiI[m]);
    c[m] = kernel == Kernel::q ? cplx(std::norm(phi)) : std::conj(phi) * cplx(p.dR[m], p.dI[m]);
  }
  return gridding_adjoint(p, c, GriddingParams{8, 2.0});
}

std::vector<std::string> recon_sum_step_names() {
  std::vector<std::string> names = sum_step_names();
  names.push_back("nufft");
  return names;
}

namespace {

// The ladder's step programs are built beside mri_recon's folder: build/steps/mri/mri_NN_name.
std::filesystem::path ladder_program(const std::string& id) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return self.parent_path().parent_path() / ("mri_" + id);
}

bool is_ladder_id(const std::string& name) {
  return name.size() > 3 && std::isdigit((unsigned char)name[0]) && std::isdigit((unsigned char)name[1]) && name[2] == '_';
}

// A ladder step run as its own program: the problem written as a folder, the step run on it
// twice (a warm-up, then the timed run: the record holds both, so what the process pays once
// is apart from what each image costs), its --out read back, and its own times from its
// --json record. What runs is exactly the step's program, GPU steps included; exit 77 (no
// GPU) passes through. The program does not validate its output against the direct sum
// (--no-validation): the reconstruction compares its image with the true one, and on the
// large problem that reference costs seconds for a step of milliseconds.
SumStep program_sums(const std::string& id, const std::filesystem::path& exe, SumTiming* timing) {
  return [id, exe, timing](const Problem& p, Kernel k) {
    namespace fs = std::filesystem;
    const char* kernel = k == Kernel::q ? "q" : "fhd";
    const fs::path dir = fs::temp_directory_path() / ("stepwise-recon-" + std::to_string(::getpid()) + "-" + id + "-" + kernel);
    fs::remove_all(dir);
    save_folder(p, dir.string());
    const fs::path out = dir / "out.npy", record = dir / "record.jsonl";
    const std::string cmd = "'" + exe.string() + "' --input '" + dir.string() + "' --kernel " + kernel + " --out '" +
                            out.string() + "' --json '" + record.string() + "' --repeat 1 --warmup 1 --quiet --no-validation";
    const int status = std::system(cmd.c_str());
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (rc == core::kNoGpu) {
      fs::remove_all(dir);
      throw core::NoGpuError("mri_" + id + " needs a GPU");
    }
    if (rc != 0) {
      fs::remove_all(dir);
      throw core::RuntimeError("mri_" + id + " --kernel " + kernel + " exited " + std::to_string(rc));
    }
    const std::vector<std::complex<float>> values = core::read_npy_as<std::complex<float>>(out.string());
    if (timing) {
      std::ifstream in(record);
      std::string line, last;
      while (std::getline(in, line))
        if (!line.empty()) last = line;
      const core::json r = core::json::parse(last, nullptr, false);
      const std::string wrong = r.is_discarded() ? "not JSON" : core::check_record(r);
      if (!wrong.empty()) {
        fs::remove_all(dir);
        throw core::RuntimeError("mri_" + id + " --kernel " + kernel + " wrote no readable results record: " + wrong);
      }
      const core::json& t = r["timing"];
      const auto number = [](const core::json& object, const char* key) {
        return object.is_object() && object.contains(key) && object[key].is_number() ? object[key].get<double>() : NAN;
      };
      const auto median = [&](const char* key) { return t.contains(key) ? number(t[key], "median") : NAN; };
      timing->step_ms = median("total_ms");
      timing->kernel_ms = median("kernel_ms");
      timing->load_ms = median("load_ms");
      timing->store_ms = median("store_ms");
      timing->first_ms = number(t, "first_run_ms");
      timing->device_setup_ms = number(t, "device_setup_ms");
      const core::json& params = r["params"];
      timing->upload_ms = number(params, "upload_ms");
      timing->plan_ms = number(params, "plan_ms");
      timing->prepare_ms = number(params, "prepare_ms");
      timing->fft_plan_ms = number(params, "fft_plan_ms");
      const core::json empty = core::json::object();
      const core::json& phases = params.contains("phase_ms") ? params["phase_ms"] : empty;
      timing->spread_ms = number(phases, "spread");
      timing->fft_ms = number(phases, "fft");
      timing->deapodize_ms = number(phases, "deapodize");
    }
    fs::remove_all(dir);
    if (values.size() != p.voxels())
      throw core::RuntimeError("mri_" + id + " wrote " + std::to_string(values.size()) + " values for " +
                               std::to_string(p.voxels()) + " voxels");
    return cvec(values.begin(), values.end());
  };
}

}  // namespace

bool direct_sum_on_cpu(const std::string& name) {
  const auto known = sum_step_names();
  if (std::find(known.begin(), known.end(), name) != known.end()) return true;
  const std::string id = name.rfind("mri_", 0) == 0 ? name.substr(4) : name;
  return is_ladder_id(id) && (id.rfind("00_", 0) == 0 || id.rfind("01_", 0) == 0);
}

SumStep recon_sum_step(const std::string& name, const std::string& flag, SumTiming* timing) {
  if (name == "nufft") return nufft_sums;
  const auto known = sum_step_names();
  if (std::find(known.begin(), known.end(), name) != known.end()) return sum_step(name, flag);
  const std::string id = name.rfind("mri_", 0) == 0 ? name.substr(4) : name;
  if (is_ladder_id(id)) {
    const std::filesystem::path exe = ladder_program(id);
    std::error_code ec;
    if (exe.empty() || !std::filesystem::is_regular_file(exe, ec))
      throw core::UsageError(flag + " " + name + ": no step program mri_" + id + " beside this build's steps/mri " +
                             "(a ladder step's id, e.g. 03_gather, built with meson compile mri_" + id + ")");
    return program_sums(id, exe, timing);
  }
  std::string list;
  for (const auto& s : recon_sum_step_names()) list += (list.empty() ? "" : ", ") + s;
  throw core::UsageError(flag + " " + name + ": unknown step (known: " + list + "; or a ladder step's id, e.g. 10_phase_recurrence)");
}

}  // namespace mri
