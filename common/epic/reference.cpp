#include "reference.hpp"

#include <cmath>

#include "portable.hpp"
#include "voltage.hpp"

namespace epic {

namespace {

using cd = std::complex<double>;

// exp(+2 pi i k / n) for k in [0, n): products k * j of integers index it exactly (mod n).
std::vector<cd> twiddles(int n) {
  std::vector<cd> t(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) t[size_t(k)] = std::polar(1.0, 2 * core::kPi * k / n);
  return t;
}

inline int mod(long long a, int n) { return int(((a % n) + n) % n); }

// A_a along one axis at every image index i (j = i - n/2): sum_s w[s] exp(2 pi i (k0 + s) j / n).
void axis_transform(int n, int support, int k0, const double* w, const std::vector<cd>& tw, cd* out) {
  for (int i = 0; i < n; ++i) {
    cd s = 0;
    for (int q = 0; q < support; ++q) s += w[q] * tw[size_t(mod((long long)(k0 + q) * (i - n / 2), n))];
    out[i] = s;
  }
}

// sum_t E_p conj(E_q) for one stand, or over a pair of stands.
cd correlate(const ChannelVoltages& v, int a, int p, int b, int q) {
  cd s = 0;
  for (int t = 0; t < v.samples; ++t) s += v.at(t, a, p) * std::conj(v.at(t, b, q));
  return s;
}

// The two fields' product for one pixel, added to the planes at `pixel` (stride n*n).
void add_products(const std::vector<Product>& products, cd fx, cd fy, double* planes, size_t pixel, size_t stride, double sign) {
  size_t k = 0;
  for (Product pr : products) {
    cd v;
    switch (pr) {
      case Product::XX: v = std::norm(fx); break;
      case Product::YY: v = std::norm(fy); break;
      case Product::XY: v = fx * std::conj(fy); break;
      case Product::YX: v = fy * std::conj(fx); break;
      case Product::I: v = std::norm(fx) + std::norm(fy); break;
    }
    planes[k++ * stride + pixel] += sign * v.real();
    if (is_complex(pr)) planes[k++ * stride + pixel] += sign * v.imag();
  }
}

// Correlation of a stand's pol p with another's pol q, as the product needs: which (p, q) pairs
// and how they combine. Returns V for the product from the three basic correlations.
cd product_of(Product pr, cd xx, cd yy, cd xy, cd yx) {
  switch (pr) {
    case Product::XX: return xx;
    case Product::YY: return yy;
    case Product::XY: return xy;
    case Product::YX: return yx;
    case Product::I: return xx + yy;
  }
  return 0;
}

void apply_correction(std::vector<double>& planes, int n, const std::vector<double>& g) {
  const size_t nn = size_t(n) * n;
  for (size_t k = 0; k < planes.size() / nn; ++k)
    for (int m = 0; m < n; ++m)
      for (int l = 0; l < n; ++l) planes[k * nn + size_t(m) * n + l] *= g[size_t(m)] * g[size_t(l)];
}

}  // namespace

ChannelVoltages decode_channel(const Problem& p, int channel) {
  ChannelVoltages v;
  v.samples = p.obs.samples();
  v.stands = p.station.size();
  v.pols = p.obs.pols;
  v.e.resize(size_t(v.samples) * v.stands * v.pols);
  const size_t per_sample = size_t(p.obs.channels) * v.stands * v.pols;
  for (int t = 0; t < v.samples; ++t) {
    const uint8_t* b = p.voltages.data() + t * per_sample + size_t(channel) * v.stands * v.pols;
    for (int i = 0; i < v.stands * v.pols; ++i) v.e[size_t(t) * v.stands * v.pols + i] = {double(nibble_re(b[i])), double(nibble_im(b[i]))};
  }
  return v;
}

ChannelGrid channel_grid(const GridPlan& plan, int channel) {
  const size_t first = plan.at(channel, 0);
  return {plan.n, plan.support, plan.stands, &plan.cell_x[first], &plan.cell_y[first],
          &plan.weight_x[first * plan.support], &plan.weight_y[first * plan.support]};
}

std::vector<double> beamformer_image(const ChannelVoltages& v, const ChannelGrid& g, const std::vector<Product>& products,
                                     bool remove_autos, const std::vector<double>& correction) {
  const int n = g.n, A = g.stands, S = g.support;
  const size_t nn = size_t(n) * n;
  const std::vector<cd> tw = twiddles(n);
  std::vector<cd> ax(size_t(A) * n), ay(size_t(A) * n);
  for (int a = 0; a < A; ++a) {
    axis_transform(n, S, g.cell_x[a], g.weight_x + size_t(a) * S, tw, &ax[size_t(a) * n]);
    axis_transform(n, S, g.cell_y[a], g.weight_y + size_t(a) * S, tw, &ay[size_t(a) * n]);
  }
  std::vector<double> planes(size_t(plane_count(products)) * nn, 0.0);
  std::vector<cd> field(size_t(v.pols) * nn);
  for (int t = 0; t < v.samples; ++t) {
    std::fill(field.begin(), field.end(), cd(0));
    for (int p = 0; p < v.pols; ++p) {
      cd* f = &field[size_t(p) * nn];
      for (int a = 0; a < A; ++a) {
        const cd e = v.at(t, a, p);
        if (e == cd(0)) continue;
        const cd* x = &ax[size_t(a) * n];
        const cd* y = &ay[size_t(a) * n];
        for (int m = 0; m < n; ++m) {
          const cd ey = e * y[m];
          for (int l = 0; l < n; ++l) f[size_t(m) * n + l] += ey * x[l];
        }
      }
    }
    for (size_t px = 0; px < nn; ++px)
      add_products(products, field[px], v.pols > 1 ? field[nn + px] : cd(0), planes.data(), px, nn, 1.0);
  }
  if (remove_autos) {
    // The a = b terms of |sum_a E_a A_a|^2 summed over the samples: sum_a P_a |A_a(j)|^2.
    for (int a = 0; a < A; ++a) {
      const cd xx = correlate(v, a, 0, a, 0);
      const cd yy = v.pols > 1 ? correlate(v, a, 1, a, 1) : 0;
      const cd xy = v.pols > 1 ? correlate(v, a, 0, a, 1) : 0;
      for (int m = 0; m < n; ++m)
        for (int l = 0; l < n; ++l) {
          const double gain = std::norm(ax[size_t(a) * n + l]) * std::norm(ay[size_t(a) * n + m]);
          size_t k = 0;
          for (Product pr : products) {
            const cd val = product_of(pr, xx, yy, xy, std::conj(xy)) * gain;
            planes[k++ * nn + size_t(m) * n + l] -= val.real();
            if (is_complex(pr)) planes[k++ * nn + size_t(m) * n + l] -= val.imag();
          }
        }
    }
  }
  apply_correction(planes, n, correction);
  return planes;
}

std::vector<double> fx_image(const ChannelVoltages& v, const ChannelGrid& g, const std::vector<Product>& products,
                             bool remove_autos, const std::vector<double>& correction) {
  const int n = g.n, A = g.stands, S = g.support, T = v.samples;
  const size_t nn = size_t(n) * n;
  // The correlator: V_pq(a, b) = sum_t E_ap conj(E_bq), as split real and imaginary parts.
  const bool dual = v.pols > 1;
  const int pairs = dual ? 3 : 1;  // XX, YY, XY (YX(a, b) = conj(XY(b, a)))
  const int pq[3][2] = {{0, 0}, {1, 1}, {0, 1}};
  std::vector<std::vector<double>> vr(size_t(pairs), std::vector<double>(size_t(A) * A, 0.0)),
      vi(size_t(pairs), std::vector<double>(size_t(A) * A, 0.0));
  std::vector<double> er(static_cast<size_t>(A)), ei(static_cast<size_t>(A)), fr(static_cast<size_t>(A)), fi(static_cast<size_t>(A));
  for (int k = 0; k < pairs; ++k)
    for (int t = 0; t < T; ++t) {
      for (int a = 0; a < A; ++a) {
        er[size_t(a)] = v.at(t, a, pq[k][0]).real(), ei[size_t(a)] = v.at(t, a, pq[k][0]).imag();
        fr[size_t(a)] = v.at(t, a, pq[k][1]).real(), fi[size_t(a)] = v.at(t, a, pq[k][1]).imag();
      }
      for (int a = 0; a < A; ++a) {
        const double xr = er[size_t(a)], xi = ei[size_t(a)];
        if (xr == 0 && xi == 0) continue;
        double* rr = &vr[size_t(k)][size_t(a) * A];
        double* ri = &vi[size_t(k)][size_t(a) * A];
        for (int b = 0; b < A; ++b) {  // x conj(f)
          rr[b] += xr * fr[size_t(b)] + xi * fi[size_t(b)];
          ri[b] += xi * fr[size_t(b)] - xr * fi[size_t(b)];
        }
      }
    }
  auto vis = [&](int k, int a, int b) { return cd(vr[size_t(k)][size_t(a) * A + b], vi[size_t(k)][size_t(a) * A + b]); };

  const std::vector<cd> tw = twiddles(n);
  std::vector<double> planes(size_t(plane_count(products)) * nn, 0.0);
  std::vector<cd> grid(nn), half(nn);
  const int D = 2 * S - 1;  // offsets s - s' in -(S-1) .. S-1
  std::vector<double> wxab(static_cast<size_t>(D)), wyab(static_cast<size_t>(D));
  size_t plane = 0;
  for (Product pr : products) {
    std::fill(grid.begin(), grid.end(), cd(0));
    for (int a = 0; a < A; ++a)
      for (int b = 0; b < A; ++b) {
        if (remove_autos && a == b) continue;
        const cd V = dual ? product_of(pr, vis(0, a, b), vis(1, a, b), vis(2, a, b), std::conj(vis(2, b, a))) : vis(0, a, b);
        if (V == cd(0)) continue;
        // The baseline's kernel: the correlation of the two stands' kernels, per axis.
        std::fill(wxab.begin(), wxab.end(), 0.0);
        std::fill(wyab.begin(), wyab.end(), 0.0);
        for (int s = 0; s < S; ++s)
          for (int r = 0; r < S; ++r) {
            wxab[size_t(s - r + S - 1)] += g.weight_x[size_t(a) * S + s] * g.weight_x[size_t(b) * S + r];
            wyab[size_t(s - r + S - 1)] += g.weight_y[size_t(a) * S + s] * g.weight_y[size_t(b) * S + r];
          }
        const int bx = g.cell_x[a] - g.cell_x[b], by = g.cell_y[a] - g.cell_y[b];
        for (int dy = 0; dy < D; ++dy)
          for (int dx = 0; dx < D; ++dx)
            grid[size_t(mod(by + dy - (S - 1), n)) * n + mod(bx + dx - (S - 1), n)] += V * (wxab[size_t(dx)] * wyab[size_t(dy)]);
      }
    // The inverse DFT, one axis at a time: image(m, l) = sum_{dy, dx} grid(dy, dx) exp(2 pi i (dx j_l + dy j_m) / n).
    for (int dy = 0; dy < n; ++dy)
      for (int l = 0; l < n; ++l) {
        cd s = 0;
        for (int dx = 0; dx < n; ++dx) s += grid[size_t(dy) * n + dx] * tw[size_t(mod((long long)dx * (l - n / 2), n))];
        half[size_t(dy) * n + l] = s;
      }
    for (int m = 0; m < n; ++m)
      for (int l = 0; l < n; ++l) {
        cd s = 0;
        for (int dy = 0; dy < n; ++dy) s += half[size_t(dy) * n + l] * tw[size_t(mod((long long)dy * (m - n / 2), n))];
        planes[plane * nn + size_t(m) * n + l] = s.real();
        if (is_complex(pr)) planes[(plane + 1) * nn + size_t(m) * n + l] = s.imag();
      }
    plane += is_complex(pr) ? 2 : 1;
  }
  apply_correction(planes, n, correction);
  return planes;
}

std::vector<double> true_beamformer(const ChannelVoltages& v, const Station& station, double lambda, double grid_spacing,
                                    int n, int pol) {
  const int A = v.stands;
  std::vector<double> out(size_t(n) * n, 0.0);
  std::vector<cd> steer(size_t(A) * n * 2);  // per stand: exp(2 pi i e l / lambda) at each column, then rows
  for (int a = 0; a < A; ++a)
    for (int i = 0; i < n; ++i) {
      const double sky = (i - n / 2) / (n * grid_spacing);  // l or m of pixel i
      steer[(size_t(a) * 2 + 0) * n + i] = std::polar(1.0, 2 * core::kPi * station.east[size_t(a)] * sky / lambda);
      steer[(size_t(a) * 2 + 1) * n + i] = std::polar(1.0, 2 * core::kPi * station.north[size_t(a)] * sky / lambda);
    }
  for (int t = 0; t < v.samples; ++t)
    for (int m = 0; m < n; ++m)
      for (int l = 0; l < n; ++l) {
        cd s = 0;
        for (int a = 0; a < A; ++a) s += v.at(t, a, pol) * steer[(size_t(a) * 2 + 0) * n + l] * steer[(size_t(a) * 2 + 1) * n + m];
        out[size_t(m) * n + l] += std::norm(s);
      }
  return out;
}

const char* reference_name(ReferenceKind k) { return k == ReferenceKind::fx ? "fx-double" : "beamformer-double"; }

std::vector<double> reference_images(const Problem& p, const std::vector<int>& channels, ReferenceKind kind) {
  const int n = p.imaging.image_size, planes = plane_count(p.imaging.products);
  const size_t nn = size_t(n) * n, K = channels.size();
  std::vector<double> out(size_t(planes) * K * nn);
#pragma omp parallel for schedule(dynamic)
  for (size_t k = 0; k < K; ++k) {
    const ChannelVoltages v = decode_channel(p, channels[k]);
    const ChannelGrid g = channel_grid(p.plan, channels[k]);
    const std::vector<double> img = kind == ReferenceKind::fx
                                        ? fx_image(v, g, p.imaging.products, p.imaging.remove_autos, p.correction)
                                        : beamformer_image(v, g, p.imaging.products, p.imaging.remove_autos, p.correction);
    for (int q = 0; q < planes; ++q)
      std::copy(img.begin() + long(q * nn), img.begin() + long((q + 1) * nn), out.begin() + long((size_t(q) * K + k) * nn));
  }
  return out;
}

}  // namespace epic
