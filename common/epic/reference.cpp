#include "epic/reference.hpp"

#include <algorithm>
#include <cmath>

#include "core/portable.hpp"
#include "core/quadrature.hpp"
#include "epic/voltage.hpp"

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

namespace {

// C^(f) / C^(0) of the prolate psi_0(c, 2t/S), c = pi S / 2: psi_0(c, 2f) / psi_0(c, 0), psi_0
// the eigenfunction of the largest eigenvalue of (K psi)(x) = int_{-1}^{1} cos(c x y) psi(y) dy.
// psi_0 is even and K's largest eigenvalue is simple, so the power iteration from a constant
// converges to it; Nystrom's formula then gives psi_0 anywhere:
// psi_0(x) ~ sum_j w_j cos(c x y_j) psi_0(y_j).
std::vector<double> prolate_transform(double c, const std::vector<double>& f) {
  const int m = 64;
  const core::Quadrature rule = core::gauss_legendre(m);
  const std::vector<double>& y = rule.x;
  const std::vector<double>& w = rule.w;
  std::vector<double> k(size_t(m) * m), psi(size_t(m), 1.0), next(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) k[size_t(i) * m + j] = w[size_t(j)] * std::cos(c * y[size_t(i)] * y[size_t(j)]);
  for (int it = 0; it < 10000; ++it) {
    double top = 0;
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int j = 0; j < m; ++j) s += k[size_t(i) * m + j] * psi[size_t(j)];
      next[size_t(i)] = s;
      top = std::max(top, std::abs(s));
    }
    double change = 0;
    for (int i = 0; i < m; ++i) {
      change = std::max(change, std::abs(next[size_t(i)] / top - psi[size_t(i)]));
      psi[size_t(i)] = next[size_t(i)] / top;
    }
    if (change < 1e-15) break;
  }
  auto at = [&](double x) {
    double s = 0;
    for (int j = 0; j < m; ++j) s += w[size_t(j)] * std::cos(c * x * y[size_t(j)]) * psi[size_t(j)];
    return s;
  };
  const double zero = at(0);
  std::vector<double> out;
  for (double fi : f) out.push_back(at(2 * fi) / zero);
  return out;
}

}  // namespace

std::vector<double> reference_correction(KernelKind kind, int support, int n) {
  std::vector<double> g(size_t(n), 1.0);
  if (support == 1 || kind == KernelKind::delta) return g;
  const double beta = core::kPi * support / 2;  // also the prolate's c
  std::vector<double> f(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) f[size_t(i)] = double(i - n / 2) / n;
  std::vector<double> t;
  if (kind == KernelKind::kaiser_bessel) {
    auto shape = [](double z) { return z < 1e-6 ? 1 + z * z / 6 : std::sinh(z) / z; };
    for (double fi : f) {
      const double z2 = beta * beta - std::pow(core::kPi * support * fi, 2);
      t.push_back(shape(std::sqrt(std::max(0.0, z2))) / shape(beta));
    }
  } else {
    t = prolate_transform(beta, f);
  }
  for (int i = 0; i < n; ++i) g[size_t(i)] = 1 / (t[size_t(i)] * t[size_t(i)]);
  return g;
}

ZeroLag zero_lag(const Problem& p) {
  const int n = p.imaging.image_size, A = p.station.size(), S = p.plan.support, C = p.obs.channels, P = p.obs.pols;
  const int T = p.obs.samples();
  const std::vector<Product>& products = p.imaging.products;
  const bool no_autos = p.imaging.remove_autos;
  ZeroLag z;
  z.planes = plane_count(products);
  z.channels = C;
  z.sum.assign(size_t(z.planes) * C, 0.0);
  z.scale.assign(size_t(z.planes) * C, 0.0);
  z.pairs.assign(size_t(C), 0);
  const double nn = double(n) * n;
#pragma omp parallel for schedule(dynamic)
  for (int c = 0; c < C; ++c) {
    const ChannelGrid g = channel_grid(p.plan, c);
    // The stands whose S x S supports share a cell of the periodic grid, with W_ab per axis.
    struct Pair {
      int a, b;
      double w;
    };
    std::vector<Pair> pairs;
    auto overlap = [&](const int32_t* cell, const double* weight, int a, int b, double& w) {
      bool shared = false;
      w = 0;
      for (int i = 0; i < S; ++i)
        for (int j = 0; j < S; ++j)
          if (mod((long long)cell[a] + i - cell[b] - j, n) == 0) {
            shared = true;
            w += weight[size_t(a) * S + i] * weight[size_t(b) * S + j];
          }
      return shared;
    };
    for (int a = 0; a < A; ++a)
      for (int b = 0; b < A; ++b) {
        double wx, wy;
        if (overlap(g.cell_x, g.weight_x, a, b, wx) && overlap(g.cell_y, g.weight_y, a, b, wy)) pairs.push_back({a, b, wx * wy});
      }
    // Per pair over every sample: Re XX, Re YY, Re and Im of XY* (the totals over the ordered
    // pairs of XX and YY are real: (a, b) and (b, a) are conjugate; YX*'s is conj(XY*'s)).
    constexpr int kBlock = 512;
    std::vector<int> re(size_t(P) * A * kBlock), im(size_t(P) * A * kBlock);  // (pol, stand, t)
    std::vector<long long> acc(pairs.size() * 4, 0);
    const size_t stride = size_t(C) * A * P;
    for (int t0 = 0; t0 < T; t0 += kBlock) {
      const int len = std::min(kBlock, T - t0);
      for (int t = 0; t < len; ++t) {
        const uint8_t* b = p.voltages.data() + size_t(t0 + t) * stride + size_t(c) * A * P;
        for (int a = 0; a < A; ++a)
          for (int q = 0; q < P; ++q) {
            re[(size_t(q) * A + a) * kBlock + t] = nibble_re(b[a * P + q]);
            im[(size_t(q) * A + a) * kBlock + t] = nibble_im(b[a * P + q]);
          }
      }
      for (size_t k = 0; k < pairs.size(); ++k) {
        const int* xa_re = &re[size_t(pairs[k].a) * kBlock];
        const int* xa_im = &im[size_t(pairs[k].a) * kBlock];
        const int* xb_re = &re[size_t(pairs[k].b) * kBlock];
        const int* xb_im = &im[size_t(pairs[k].b) * kBlock];
        long long xx = 0, yy = 0, xy_re = 0, xy_im = 0;
        for (int t = 0; t < len; ++t) xx += xa_re[t] * xb_re[t] + xa_im[t] * xb_im[t];
        if (P > 1) {
          const int* ya_re = &re[(size_t(A) + pairs[k].a) * kBlock];
          const int* ya_im = &im[(size_t(A) + pairs[k].a) * kBlock];
          const int* yb_re = &re[(size_t(A) + pairs[k].b) * kBlock];
          const int* yb_im = &im[(size_t(A) + pairs[k].b) * kBlock];
          for (int t = 0; t < len; ++t) {
            yy += ya_re[t] * yb_re[t] + ya_im[t] * yb_im[t];
            xy_re += xa_re[t] * yb_re[t] + xa_im[t] * yb_im[t];  // E_aX conj(E_bY)
            xy_im += xa_im[t] * yb_re[t] - xa_re[t] * yb_im[t];
          }
        }
        acc[k * 4 + 0] += xx, acc[k * 4 + 1] += yy, acc[k * 4 + 2] += xy_re, acc[k * 4 + 3] += xy_im;
      }
    }
    double sxx = 0, syy = 0, sxy_re = 0, sxy_im = 0, px = 0, py = 0;
    int distinct = 0;
    for (size_t k = 0; k < pairs.size(); ++k) {
      const double w = pairs[k].w;
      if (pairs[k].a == pairs[k].b) {
        px += w * double(acc[k * 4 + 0]);
        py += w * double(acc[k * 4 + 1]);
        if (no_autos) continue;
      } else {
        ++distinct;
      }
      sxx += w * double(acc[k * 4 + 0]);
      syy += w * double(acc[k * 4 + 1]);
      sxy_re += w * double(acc[k * 4 + 2]);
      sxy_im += w * double(acc[k * 4 + 3]);
    }
    z.pairs[size_t(c)] = distinct;
    size_t q = 0;
    auto put = [&](double value, double scale) {
      z.sum[q * C + size_t(c)] = nn * value;
      z.scale[q * C + size_t(c)] = nn * scale;
      ++q;
    };
    for (Product pr : products) switch (pr) {
        case Product::XX: put(sxx, px); break;
        case Product::YY: put(syy, py); break;
        case Product::I: put(sxx + syy, px + py); break;
        case Product::XY: put(sxy_re, std::sqrt(px * py)), put(sxy_im, std::sqrt(px * py)); break;
        case Product::YX: put(sxy_re, std::sqrt(px * py)), put(-sxy_im, std::sqrt(px * py)); break;
      }
  }
  return z;
}

const char* reference_name(ReferenceKind k) { return k == ReferenceKind::fx ? "fx-double" : "beamformer-double"; }

std::vector<double> reference_images(const Problem& p, const std::vector<int>& channels, ReferenceKind kind) {
  const int n = p.imaging.image_size, planes = plane_count(p.imaging.products);
  const size_t nn = size_t(n) * n, K = channels.size();
  std::vector<double> out(size_t(planes) * K * nn);
  const std::vector<double> correction = reference_correction(p.imaging.kernel, p.imaging.support, n);
#pragma omp parallel for schedule(dynamic)
  for (size_t k = 0; k < K; ++k) {
    const ChannelVoltages v = decode_channel(p, channels[k]);
    const ChannelGrid g = channel_grid(p.plan, channels[k]);
    const std::vector<double> img = kind == ReferenceKind::fx
                                        ? fx_image(v, g, p.imaging.products, p.imaging.remove_autos, correction)
                                        : beamformer_image(v, g, p.imaging.products, p.imaging.remove_autos, correction);
    for (int q = 0; q < planes; ++q)
      std::copy(img.begin() + long(q * nn), img.begin() + long((q + 1) * nn), out.begin() + long((size_t(q) * K + k) * nn));
  }
  return out;
}

}  // namespace epic
