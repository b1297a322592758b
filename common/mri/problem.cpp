#include "mri/problem.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "mri/phantom.hpp"
#include "core/portable.hpp"

namespace mri {

using core::UsageError;

const char* kernel_name(Kernel k) { return k == Kernel::fhd ? "fhd" : "q"; }

std::string Problem::digest() const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const std::vector<float>& v) {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(v.data());
    for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ b[i]) * 1099511628211ull;
    h = (h ^ v.size()) * 1099511628211ull;
  };
  for (const auto* v : {&kx, &ky, &kz, &phiR, &phiI, &dR, &dI, &x, &y, &z}) mix(*v);
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

struct Shape {
  int n;          // voxels per side
  int planes;     // kz planes of the stack of spirals
  int arms;       // spiral interleaves per plane
  int points;     // samples per arm
};

Shape shape_of(const std::string& size) {
  if (size == "tiny") return {8, 8, 2, 64};
  if (size == "small") return {32, 32, 8, 128};
  if (size == "large") return {64, 64, 16, 3136};
  throw UsageError("--size " + size + ": unknown size (tiny, small, large)");
}

// Cartesian voxel grid: x_j = (j - n/2) / n, index (iz * n + iy) * n + ix.
void fill_grid(Problem& p, int n) {
  const size_t count = size_t(n) * n * n;
  p.x.resize(count); p.y.resize(count); p.z.resize(count);
  for (int iz = 0; iz < n; ++iz)
    for (int iy = 0; iy < n; ++iy)
      for (int ix = 0; ix < n; ++ix) {
        const size_t i = (size_t(iz) * n + iy) * n + ix;
        p.x[i] = float(ix - n / 2) / n;
        p.y[i] = float(iy - n / 2) / n;
        p.z[i] = float(iz - n / 2) / n;
      }
}

double sinc(double u) { return std::abs(u) < 1e-12 ? 1.0 : std::sin(core::kPi * u) / (core::kPi * u); }

}  // namespace

std::vector<std::complex<double>> sample_noise(uint64_t seed, size_t samples) {
  std::mt19937_64 noise_rng(seed ^ 0x6a09e667f3bcc909ull);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::vector<std::complex<double>> noises(samples);
  for (auto& n : noises) {
    // The imaginary part draws first: the order in which GCC evaluated the two draws when they
    // were a constructor's arguments (right to left), which every recorded problem has.
    const double im = gauss(noise_rng);
    n = {gauss(noise_rng), im};
  }
  return noises;
}

Problem generate(const std::string& size, uint64_t seed, double noise, size_t max_samples,
                 int undersample) {
  if (!(noise >= 0) || noise > 10) throw UsageError("--noise must be in [0, 10]");
  const Shape s = shape_of(size);
  if (undersample < 1 || undersample > s.arms)
    throw UsageError("--undersample must be in [1, " + std::to_string(s.arms) + "] (the spiral arms per plane of --size " + size + ")");
  Problem p;
  p.name = undersample > 1 ? size + "-R" + std::to_string(undersample) : size;
  fill_grid(p, s.n);
  const int kept_arms = (s.arms + undersample - 1) / undersample;
  const size_t all = size_t(s.planes) * kept_arms * s.points;
  const size_t M = max_samples ? std::min(all, max_samples) : all;
  if (M < all) p.name += "-first" + std::to_string(M);
  p.kx.resize(M); p.ky.resize(M); p.kz.resize(M);
  p.phiR.resize(M); p.phiI.resize(M); p.dR.resize(M); p.dI.resize(M);

  // Stack of spirals: Archimedean interleaves reaching k_max = n/2 on every kz plane, with
  // enough turns that neighbouring arms are at most one cycle/FOV apart (Nyquist).
  const double kmax = s.n / 2.0;
  const double turns = std::ceil(kmax / s.arms);
  // Separate streams, so that adding noise leaves the trajectory unchanged. Both are drawn first,
  // in the order the samples take them (a twist per plane, two normals per sample); then every
  // sample is its own work, computed in parallel and the same, bit for bit, as one by one.
  std::mt19937_64 rng(seed);
  const size_t per_plane = size_t(kept_arms) * s.points;
  const int planes = int((M + per_plane - 1) / per_plane);
  std::vector<double> twists(planes);
  // A seeded rotation per plane, so different seeds give different trajectories.
  for (double& twist : twists) twist = 2 * core::kPi * std::uniform_real_distribution<double>(0, 1)(rng);
  const std::vector<std::complex<double>> noises = sample_noise(seed, noise > 0 ? M : 0);
  const double scale = std::abs(phantom_transform(0, 0, 0));
#pragma omp parallel for schedule(static)
  for (size_t m = 0; m < M; ++m) {
    const int plane = int(m / per_plane), arm = int(m % per_plane / s.points) * undersample, i = int(m % s.points);
    const double kz = plane - s.planes / 2;
    const double t = double(i) / s.points;
    const double angle = 2 * core::kPi * (turns * t + double(arm) / s.arms) + twists[plane];
    const double kx = kmax * t * std::cos(angle), ky = kmax * t * std::sin(angle);
    p.kx[m] = float(kx); p.ky[m] = float(ky); p.kz[m] = float(kz);
    // Voxel basis: a box of one voxel starting at x_j, whose transform is a sinc
    // per axis times a half-voxel phase shift.
    const double w = 1.0 / s.n;
    const std::complex<double> phi =
        sinc(kx * w) * sinc(ky * w) * sinc(kz * w) *
        std::polar(1.0, -core::kPi * w * (kx + ky + kz));
    p.phiR[m] = float(phi.real()); p.phiI[m] = float(phi.imag());
    // The voxel-basis model: d = phi * F(k), with F the phantom's analytic transform.
    std::complex<double> d = phi * phantom_transform(kx, ky, kz);
    if (noise > 0) d += noise * scale * noises[m] / std::sqrt(2.0);
    p.dR[m] = float(d.real()); p.dI[m] = float(d.imag());
  }
  p.params = {{"voxels", p.voxels()}, {"samples", M},       {"grid", s.n},
              {"trajectory", "stack-of-spirals"},          {"planes", s.planes},
              {"arms", s.arms},       {"points_per_arm", s.points},
              {"seed", seed},         {"noise", noise}};
  if (M < all) p.params["samples_of"] = all;
  if (undersample > 1) p.params["undersample"] = undersample;
  p.grid = find_grid(p.x, p.y, p.z);
  return p;
}

Problem toeplitz_problem(const Problem& p) {
  if (p.grid[0] == 0) throw UsageError(p.name + ": the voxels are not a Cartesian grid; Q for F^H F needs one");
  Problem t;
  t.name = p.name + "-toeplitz";
  t.params = p.params;
  t.params["toeplitz_of"] = {p.grid[0], p.grid[1], p.grid[2]};
  // k doubled is exact in float; the phase k'.x' of the (2n)^3 grid equals k.x on x = (j - n)/n.
  const auto twice = [](const std::vector<float>& v) {
    std::vector<float> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = 2 * v[i];
    return out;
  };
  t.kx = twice(p.kx); t.ky = twice(p.ky); t.kz = twice(p.kz);
  t.phiR = p.phiR; t.phiI = p.phiI;
  const int nx = 2 * p.grid[0], ny = 2 * p.grid[1], nz = 2 * p.grid[2];
  const size_t count = size_t(nx) * ny * nz;
  t.x.resize(count); t.y.resize(count); t.z.resize(count);
  for (int iz = 0; iz < nz; ++iz)
    for (int iy = 0; iy < ny; ++iy)
      for (int ix = 0; ix < nx; ++ix) {
        const size_t i = (size_t(iz) * ny + iy) * nx + ix;
        t.x[i] = float(ix - nx / 2) / nx;
        t.y[i] = float(iy - ny / 2) / ny;
        t.z[i] = float(iz - nz / 2) / nz;
      }
  t.grid = find_grid(t.x, t.y, t.z);
  return t;
}

std::array<int, 3> find_grid(const std::vector<float>& x, const std::vector<float>& y,
                             const std::vector<float>& z) {
  const std::array<int, 3> none{0, 0, 0};
  const size_t N = x.size();
  if (N == 0 || y.size() != N || z.size() != N) return none;
  // The row and plane lengths are read off the first row and plane; then every voxel must be
  // where they put it.
  size_t row = 1, plane = 1;
  while (row < N && y[row] == y[0] && z[row] == z[0]) ++row;
  plane = row;
  while (plane < N && z[plane] == z[0]) ++plane;
  if (plane % row != 0 || N % plane != 0) return none;
  const size_t nx = row, ny = plane / row, nz = N / plane;
  // A few ulps of 0.5, the largest coordinate: another formula for the same grid rounds
  // differently by that much, and it must stay far below the spacing 1/n.
  const double tol = 4 * std::numeric_limits<float>::epsilon() / 2;
  if (tol * 4 * std::max({nx, ny, nz}) > 1) return none;
  const auto on = [tol](float v, size_t i, size_t n) {
    return std::abs(double(v) - (double(i) - double(n / 2)) / double(n)) <= tol;
  };
  for (size_t iz = 0, i = 0; iz < nz; ++iz)
    for (size_t iy = 0; iy < ny; ++iy)
      for (size_t ix = 0; ix < nx; ++ix, ++i)
        if (!on(x[i], ix, nx) || !on(y[i], iy, ny) || !on(z[i], iz, nz)) return none;
  return {int(nx), int(ny), int(nz)};
}

// ---- problem folders -------------------------------------------------------------------

namespace {
void check_count(const std::string& what, size_t n, size_t limit) {
  if (n == 0) throw UsageError(what + " is empty");
  if (n > limit) throw UsageError(what + " has " + std::to_string(n) + " entries, more than the limit " + std::to_string(limit));
}
}  // namespace

Problem load_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw UsageError(dir + ": not a problem folder (missing or not a directory)");
  const std::string meta_path = dir + "/meta.json";
  std::ifstream meta_in(meta_path);
  if (!meta_in) throw UsageError(meta_path + ": missing");
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(meta_in);
  } catch (const std::exception& e) {
    throw UsageError(meta_path + ": not valid JSON (" + e.what() + ")");
  }
  if (meta.value("format", "") != "stepwise-mri")
    throw UsageError(meta_path + ": 'format' must be \"stepwise-mri\"");
  const auto as_count = [&](const char* key) -> size_t {
    if (!meta.contains(key) || !meta[key].is_number_integer() || meta[key].get<long long>() <= 0)
      throw UsageError(meta_path + ": '" + key + "' must be a positive integer");
    return meta[key].get<size_t>();
  };
  const size_t M = as_count("samples"), N = as_count("voxels");
  check_count(meta_path + ": samples", M, kMaxSamples);
  check_count(meta_path + ": voxels", N, kMaxVoxels);

  Problem p;
  p.name = fs::path(dir).filename().string();
  if (p.name.empty()) p.name = fs::path(dir).parent_path().filename().string();
  p.params = meta;
  p.kx = core::read_npy_as<float>(dir + "/kx.npy", {M});
  p.ky = core::read_npy_as<float>(dir + "/ky.npy", {M});
  p.kz = core::read_npy_as<float>(dir + "/kz.npy", {M});
  const auto split = [M](const std::vector<std::complex<float>>& c, std::vector<float>& re, std::vector<float>& im) {
    re.resize(M); im.resize(M);
    for (size_t i = 0; i < M; ++i) { re[i] = c[i].real(); im[i] = c[i].imag(); }
  };
  split(core::read_npy_as<std::complex<float>>(dir + "/phi.npy", {M}), p.phiR, p.phiI);
  if (fs::exists(dir + "/d.npy")) split(core::read_npy_as<std::complex<float>>(dir + "/d.npy", {M}), p.dR, p.dI);
  p.x = core::read_npy_as<float>(dir + "/x.npy", {N});
  p.y = core::read_npy_as<float>(dir + "/y.npy", {N});
  p.z = core::read_npy_as<float>(dir + "/z.npy", {N});
  for (const auto* v : {&p.kx, &p.ky, &p.kz, &p.phiR, &p.phiI, &p.dR, &p.dI, &p.x, &p.y, &p.z})
    for (float f : *v)
      if (!std::isfinite(f)) throw UsageError(dir + ": input holds NaN or Inf");
  p.grid = find_grid(p.x, p.y, p.z);
  return p;
}

void save_folder(const Problem& p, const std::string& dir) {
  std::filesystem::create_directories(dir);
  nlohmann::json meta = p.params;
  meta["format"] = "stepwise-mri";
  meta["samples"] = p.samples();
  meta["voxels"] = p.voxels();
  std::ofstream(dir + "/meta.json") << meta.dump(2) << '\n';
  const size_t M = p.samples(), N = p.voxels();
  core::write_npy<float>(dir + "/kx.npy", {M}, p.kx.data());
  core::write_npy<float>(dir + "/ky.npy", {M}, p.ky.data());
  core::write_npy<float>(dir + "/kz.npy", {M}, p.kz.data());
  std::vector<std::complex<float>> c(M);
  for (size_t i = 0; i < M; ++i) c[i] = {p.phiR[i], p.phiI[i]};
  core::write_npy(dir + "/phi.npy", {M}, c.data());
  if (p.has_data()) {
    for (size_t i = 0; i < M; ++i) c[i] = {p.dR[i], p.dI[i]};
    core::write_npy(dir + "/d.npy", {M}, c.data());
  }
  core::write_npy<float>(dir + "/x.npy", {N}, p.x.data());
  core::write_npy<float>(dir + "/y.npy", {N}, p.y.data());
  core::write_npy<float>(dir + "/z.npy", {N}, p.z.data());
}

// ---- Parboil mri-q ----------------------------------------------------------------------

namespace {
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw UsageError(path + ": cannot open file (missing or unreadable)");
    in_.seekg(0, std::ios::end);
    size_ = static_cast<size_t>(in_.tellg());
    in_.seekg(0);
  }
  size_t size() const { return size_; }
  template <class T> T scalar(const char* what) {
    T v;
    if (!in_.read(reinterpret_cast<char*>(&v), sizeof v))
      throw UsageError(path_ + ": truncated while reading " + what);
    return v;
  }
  std::vector<float> floats(size_t n, const char* what) {
    std::vector<float> v(n);
    if (!in_.read(reinterpret_cast<char*>(v.data()), n * sizeof(float)))
      throw UsageError(path_ + ": truncated while reading " + what);
    return v;
  }

 private:
  std::string path_;
  std::ifstream in_;
  size_t size_ = 0;
};
}  // namespace

Problem load_parboil(const std::string& path) {
  Reader r(path);
  const int32_t numK = r.scalar<int32_t>("numK"), numX = r.scalar<int32_t>("numX");
  if (numK <= 0 || size_t(numK) > kMaxSamples) throw UsageError(path + ": numK = " + std::to_string(numK) + " is not a sensible sample count");
  if (numX <= 0 || size_t(numX) > kMaxVoxels) throw UsageError(path + ": numX = " + std::to_string(numX) + " is not a sensible voxel count");
  const size_t expected = 8 + 4 * (5 * size_t(numK) + 3 * size_t(numX));
  if (r.size() < expected)
    throw UsageError(path + ": truncated: numK = " + std::to_string(numK) + " and numX = " + std::to_string(numX) +
                     " need " + std::to_string(expected) + " bytes, file has " + std::to_string(r.size()));
  if (r.size() > expected)
    throw UsageError(path + ": " + std::to_string(r.size() - expected) + " bytes beyond the arrays that numK and numX describe");
  Problem p;
  p.name = std::filesystem::path(path).filename().string();
  p.kx = r.floats(numK, "kx"); p.ky = r.floats(numK, "ky"); p.kz = r.floats(numK, "kz");
  p.x = r.floats(numX, "x"); p.y = r.floats(numX, "y"); p.z = r.floats(numX, "z");
  p.phiR = r.floats(numK, "phiR"); p.phiI = r.floats(numK, "phiI");
  // A NaN or Inf in any array would flow through every step into an all-NaN output.
  for (const auto& [name, v] : {std::pair<const char*, const std::vector<float>*>{"kx", &p.kx}, {"ky", &p.ky}, {"kz", &p.kz},
                                {"x", &p.x}, {"y", &p.y}, {"z", &p.z}, {"phiR", &p.phiR}, {"phiI", &p.phiI}})
    for (size_t i = 0; i < v->size(); ++i)
      if (!std::isfinite((*v)[i]))
        throw UsageError(path + ": " + name + "[" + std::to_string(i) + "] is " + ((*v)[i] != (*v)[i] ? "NaN" : "Inf"));
  p.params = {{"format", "parboil-mri-q"}, {"samples", numK}, {"voxels", numX}};
  p.grid = find_grid(p.x, p.y, p.z);
  return p;
}

void save_parboil(const Problem& p, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UsageError(path + ": cannot open for writing");
  const int32_t numK = int32_t(p.samples()), numX = int32_t(p.voxels());
  out.write(reinterpret_cast<const char*>(&numK), 4);
  out.write(reinterpret_cast<const char*>(&numX), 4);
  for (const auto* v : {&p.kx, &p.ky, &p.kz, &p.x, &p.y, &p.z, &p.phiR, &p.phiI})
    out.write(reinterpret_cast<const char*>(v->data()), v->size() * sizeof(float));
}

ParboilOutput load_parboil_output(const std::string& path, size_t expected_voxels) {
  Reader r(path);
  const uint32_t numX = r.scalar<uint32_t>("numX");
  if (numX != expected_voxels)
    throw UsageError(path + ": holds " + std::to_string(numX) + " voxels, the input has " + std::to_string(expected_voxels));
  if (r.size() != 4 + 8 * size_t(numX))
    throw UsageError(path + ": size " + std::to_string(r.size()) + " bytes does not match numX = " + std::to_string(numX));
  ParboilOutput o;
  o.re = r.floats(numX, "Qr");
  o.im = r.floats(numX, "Qi");
  return o;
}

}  // namespace mri
