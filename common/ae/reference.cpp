#include "ae/reference.hpp"

#include <algorithm>
#include <cmath>

namespace ae::reference {

namespace {

using Vec = std::vector<double>;

size_t at(int c, int y, int x, int h, int w) { return (size_t(c) * h + y) * w + x; }

// The operands of a product as a rounding step has them: `v` itself when nothing is rounded
// (no copy: the default reference is unchanged), else the rounded copy in `storage`.
const double* operands(const Rounding* r, const double* v, size_t n, Vec& storage) {
  if (!r || !r->operand) return v;
  storage.resize(n);
  for (size_t j = 0; j < n; ++j) storage[j] = r->operand(v[j]);
  return storage.data();
}

// What a layer writes, as a rounding step stores it.
void store(const Rounding* r, Vec& v) {
  if (r && r->store)
    for (double& x : v) x = r->store(x);
}

// out (c.out, h, w) = bias + the 3x3 convolution (padding 1) of in (c.in, h, w). If asked,
// magnitude = |bias| + the sum of |weight x input| over the same terms: the scale of the
// rounding error any implementation makes in out.
void conv_forward(const Conv& c, const double* p, const Vec& in_exact, Vec& out, Vec* magnitude = nullptr,
                  const Rounding* r = nullptr) {
  const int h = c.height, w = c.width;
  Vec rounded_in, rounded_weight;
  const double* in = operands(r, in_exact.data(), in_exact.size(), rounded_in);
  const double* weight = operands(r, p + c.weight, c.weight_count(), rounded_weight);
  out.assign(size_t(c.out) * h * w, 0.0);
  if (magnitude) magnitude->assign(out.size(), 0.0);
  for (int o = 0; o < c.out; ++o) {
    std::fill_n(out.begin() + long(at(o, 0, 0, h, w)), size_t(h) * w, p[c.bias + o]);
    if (magnitude) std::fill_n(magnitude->begin() + long(at(o, 0, 0, h, w)), size_t(h) * w, std::fabs(p[c.bias + o]));
  }
  for (int o = 0; o < c.out; ++o)
    for (int i = 0; i < c.in; ++i)
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {
          const double k = weight[((size_t(o) * c.in + i) * 3 + kh) * 3 + kw];
          // Output rows and columns whose tap (kh, kw) falls inside the input (padding is 0).
          for (int y = std::max(0, 1 - kh); y < std::min(h, h + 1 - kh); ++y)
            for (int x = std::max(0, 1 - kw); x < std::min(w, w + 1 - kw); ++x)
              out[at(o, y, x, h, w)] += k * in[at(i, y + kh - 1, x + kw - 1, h, w)];
          if (magnitude)
            for (int y = std::max(0, 1 - kh); y < std::min(h, h + 1 - kh); ++y)
              for (int x = std::max(0, 1 - kw); x < std::min(w, w + 1 - kw); ++x)
                (*magnitude)[at(o, y, x, h, w)] += std::fabs(k * in[at(i, y + kh - 1, x + kw - 1, h, w)]);
        }
  store(r, out);
}

// Adds this image's weight and bias gradients to `g`; if d_in is given, sets it to the
// gradient of the input, each output gradient scattered back to the inputs it was made of.
// Output channels whose gradient is all zero are skipped (a kink's alternative starts from
// a single unit).
void conv_backward(const Conv& c, const double* p, const Vec& in_exact, const Vec& d_out, double* g, Vec* d_in,
                   const Rounding* r = nullptr) {
  const int h = c.height, w = c.width;
  // The products' operands (the bias gradient sums d_out itself).
  Vec rounded_in, rounded_d, rounded_weight;
  const double* in = operands(r, in_exact.data(), in_exact.size(), rounded_in);
  const double* d_product = operands(r, d_out.data(), d_out.size(), rounded_d);
  const double* weight = operands(r, p + c.weight, c.weight_count(), rounded_weight);
  if (d_in) d_in->assign(size_t(c.in) * h * w, 0.0);
  for (int o = 0; o < c.out; ++o) {
    double s = 0;
    bool zero = true;
    for (size_t j = 0; j < size_t(h) * w; ++j) {
      s += d_out[at(o, 0, 0, h, w) + j];
      zero = zero && d_out[at(o, 0, 0, h, w) + j] == 0;
    }
    if (zero) continue;
    g[c.bias + o] += s;
    for (int i = 0; i < c.in; ++i)
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {
          const size_t wi = ((size_t(o) * c.in + i) * 3 + kh) * 3 + kw;
          double s = 0;
          for (int y = std::max(0, 1 - kh); y < std::min(h, h + 1 - kh); ++y)
            for (int x = std::max(0, 1 - kw); x < std::min(w, w + 1 - kw); ++x) {
              const double d = d_product[at(o, y, x, h, w)];
              s += d * in[at(i, y + kh - 1, x + kw - 1, h, w)];
              if (d_in) (*d_in)[at(i, y + kh - 1, x + kw - 1, h, w)] += weight[wi] * d;
            }
          g[c.weight + wi] += s;
        }
  }
  if (d_in) store(r, *d_in);
}

Vec relu(const Vec& z) {
  Vec a(z.size());
  for (size_t j = 0; j < z.size(); ++j) a[j] = z[j] > 0 ? z[j] : 0.0;
  return a;
}

// d (through a ReLU with input z): zero where the unit was off; the derivative at 0 is taken
// as 0.
void relu_backward(const Vec& z, Vec& d) {
  for (size_t i = 0; i < d.size(); ++i)
    if (!(z[i] > 0)) d[i] = 0;
}

// 2x2 max pooling of (ch, h, w); `from` records which input each output took (the first
// maximum in row-major order within the window).
void pool_forward(int ch, int h, int w, const Vec& in, Vec& out, std::vector<size_t>& from) {
  out.assign(size_t(ch) * (h / 2) * (w / 2), 0.0);
  from.assign(out.size(), 0);
  for (int c = 0; c < ch; ++c)
    for (int y = 0; y < h / 2; ++y)
      for (int x = 0; x < w / 2; ++x) {
        size_t best = at(c, 2 * y, 2 * x, h, w);
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) {
            const size_t j = at(c, 2 * y + dy, 2 * x + dx, h, w);
            if (in[j] > in[best]) best = j;
          }
        const size_t o = at(c, y, x, h / 2, w / 2);
        out[o] = in[best];
        from[o] = best;
      }
}

void pool_backward(size_t in_size, const std::vector<size_t>& from, const Vec& d_out, Vec& d_in) {
  d_in.assign(in_size, 0.0);
  for (size_t o = 0; o < d_out.size(); ++o) d_in[from[o]] += d_out[o];
}

// Nearest-neighbour x2 upsampling of (ch, h, w) to (ch, 2h, 2w), and its adjoint.
void up_forward(int ch, int h, int w, const Vec& in, Vec& out) {
  out.assign(size_t(ch) * 4 * h * w, 0.0);
  for (int c = 0; c < ch; ++c)
    for (int y = 0; y < 2 * h; ++y)
      for (int x = 0; x < 2 * w; ++x) out[at(c, y, x, 2 * h, 2 * w)] = in[at(c, y / 2, x / 2, h, w)];
}

void up_backward(int ch, int h, int w, const Vec& d_out, Vec& d_in) {
  d_in.assign(size_t(ch) * h * w, 0.0);
  for (int c = 0; c < ch; ++c)
    for (int y = 0; y < 2 * h; ++y)
      for (int x = 0; x < 2 * w; ++x) d_in[at(c, y / 2, x / 2, h, w)] += d_out[at(c, y, x, 2 * h, 2 * w)];
}

// Everything one image's backward pass needs from its own forward pass: the inputs of every
// ReLU (z) and of every convolution.
struct Activations {
  Vec x, z1, a1, p1, z2, a2, p2, z3, u3, z4, u4, y;
  std::vector<size_t> from1, from2;
  Vec s1, s2, s3, s4;  // the magnitudes of z1..z4 (conv_forward), when kinks are looked for
};

void forward(const Model& m, const std::array<Conv, kLayers>& L, const double* p, const float* image, Activations& t,
             bool magnitudes = false, const Rounding* r = nullptr) {
  t.x.assign(image, image + size_t(m.channels) * m.height * m.width);
  conv_forward(L[0], p, t.x, t.z1, magnitudes ? &t.s1 : nullptr, r);
  t.a1 = relu(t.z1);
  pool_forward(L[0].out, L[0].height, L[0].width, t.a1, t.p1, t.from1);
  conv_forward(L[1], p, t.p1, t.z2, magnitudes ? &t.s2 : nullptr, r);
  t.a2 = relu(t.z2);
  pool_forward(L[1].out, L[1].height, L[1].width, t.a2, t.p2, t.from2);
  conv_forward(L[2], p, t.p2, t.z3, magnitudes ? &t.s3 : nullptr, r);
  up_forward(L[2].out, L[2].height, L[2].width, relu(t.z3), t.u3);
  conv_forward(L[3], p, t.u3, t.z4, magnitudes ? &t.s4 : nullptr, r);
  up_forward(L[3].out, L[3].height, L[3].width, relu(t.z4), t.u4);
  conv_forward(L[4], p, t.u4, t.y, nullptr, r);
}

double image_error(const Activations& t) {
  double s = 0;
  for (size_t j = 0; j < t.y.size(); ++j) s += (t.y[j] - t.x[j]) * (t.y[j] - t.x[j]);
  return s;
}

// The gradients arriving at each ReLU (before its mask) and at each pooling output during
// an image's backward pass: what a kink's alternative starts from.
struct Upstream {
  Vec d_a[5], d_p[3];  // d_a[l]: at the ReLU after conv l; d_p[l]: at the pooling after it
};

// Adds to g the gradient that d_z, the gradient at the input of the ReLU after conv l
// (l = 1..4), makes in conv l and every layer below it; records what arrives on the way.
void backward_from(int l, Vec d_z, const std::array<Conv, kLayers>& L, const double* p, const Activations& t,
                   double* g, Upstream* up, const Rounding* r = nullptr) {
  Vec d_in, d_a;
  if (l == 4) {
    conv_backward(L[3], p, t.u3, d_z, g, &d_in, r);
    up_backward(L[2].out, L[2].height, L[2].width, d_in, d_a);
    store(r, d_a);
    if (up) up->d_a[3] = d_a;
    relu_backward(t.z3, d_a);
    d_z.swap(d_a);
    l = 3;
  }
  if (l == 3) {
    conv_backward(L[2], p, t.p2, d_z, g, &d_in, r);
    if (up) up->d_p[2] = d_in;
    pool_backward(t.a2.size(), t.from2, d_in, d_a);
    if (up) up->d_a[2] = d_a;
    relu_backward(t.z2, d_a);
    d_z.swap(d_a);
    l = 2;
  }
  if (l == 2) {
    conv_backward(L[1], p, t.p1, d_z, g, &d_in, r);
    if (up) up->d_p[1] = d_in;
    pool_backward(t.a1.size(), t.from1, d_in, d_a);
    if (up) up->d_a[1] = d_a;
    relu_backward(t.z1, d_a);
    d_z.swap(d_a);
  }
  conv_backward(L[0], p, t.x, d_z, g, nullptr, r);  // the image needs no gradient
}

// Adds one image's gradient (d loss / d y = scale (y - x)) to g.
void backward(const std::array<Conv, kLayers>& L, const double* p, const Activations& t, double scale, double* g,
              Upstream* up, const Rounding* r = nullptr) {
  Vec d_y(t.y.size()), d_u4, d_a4;
  for (size_t j = 0; j < t.y.size(); ++j) d_y[j] = scale * (t.y[j] - t.x[j]);
  store(r, d_y);
  conv_backward(L[4], p, t.u4, d_y, g, &d_u4, r);
  up_backward(L[3].out, L[3].height, L[3].width, d_u4, d_a4);
  store(r, d_a4);
  if (up) up->d_a[4] = d_a4;
  relu_backward(t.z4, d_a4);
  backward_from(4, std::move(d_a4), L, p, t, g, up, r);
}

// The change of the gradient if kink k went the other way, as (index, value) pairs.
void alternative(const Kink& k, const std::array<Conv, kLayers>& L, const double* p, const Activations& t,
                 const Upstream& up, size_t parameters, std::vector<size_t>& index, std::vector<double>& value,
                 const Rounding* r) {
  const Vec* z[5] = {nullptr, &t.z1, &t.z2, &t.z3, &t.z4};
  const Vec& zl = *z[k.layer];
  Vec d_z(zl.size(), 0.0);
  if (!k.pool && k.layer > 2) {
    // The unit's mask flips: its gradient passes where it was stopped, or the reverse.
    d_z[k.unit] = (zl[k.unit] > 0 ? -1.0 : 1.0) * up.d_a[k.layer][k.unit];
  } else if (!k.pool) {
    // A ReLU under a pooling window: the window is decided again with the unit flipped. Turned
    // on, it is a small positive value, which wins a window whose other inputs are all off (its
    // maximum 0: every input off, the first taken and its gradient stopped). Float routes the
    // window's gradient through it there, not only where it was already the window's choice.
    const int h = L[size_t(k.layer - 1)].height, w = L[size_t(k.layer - 1)].width;
    const size_t plane = size_t(h) * w, c = k.unit / plane, y = k.unit % plane / size_t(w), x = k.unit % size_t(w);
    const size_t o = (c * size_t(h / 2) + y / 2) * size_t(w / 2) + x / 2;
    const std::vector<size_t>& from = k.layer == 1 ? t.from1 : t.from2;
    const bool on = !(zl[k.unit] > 0);  // the unit's state the other way
    auto value = [&](size_t j) { return j == k.unit ? (on ? std::fabs(zl[j]) : 0.0) : std::max(zl[j], 0.0); };
    auto passes = [&](size_t j) { return j == k.unit ? on : zl[j] > 0; };
    size_t best = (c * size_t(h) + y / 2 * 2) * size_t(w) + x / 2 * 2;
    for (size_t dy = 0; dy < 2; ++dy)
      for (size_t dx = 0; dx < 2; ++dx) {
        const size_t j = (c * size_t(h) + y / 2 * 2 + dy) * size_t(w) + x / 2 * 2 + dx;
        if (value(j) > value(best)) best = j;
      }
    const double d = up.d_p[k.layer][o];
    if (zl[from[o]] > 0) d_z[from[o]] -= d;
    if (passes(best)) d_z[best] += d;
  } else {
    // The pooled gradient goes to the input `to` instead of the maximum (through their ReLUs).
    const std::vector<size_t>& from = k.layer == 1 ? t.from1 : t.from2;
    const double d = up.d_p[k.layer][k.unit];
    if (zl[from[k.unit]] > 0) d_z[from[k.unit]] -= d;
    if (zl[k.to] > 0) d_z[k.to] += d;
  }
  Vec change(parameters, 0.0);
  backward_from(k.layer, std::move(d_z), L, p, t, change.data(), nullptr, r);
  index.clear();
  value.clear();
  for (size_t j = 0; j < parameters; ++j)
    if (change[j] != 0) {
      index.push_back(j);
      value.push_back(change[j]);
    }
}

// The decisions of this image's forward pass within `tolerance` of going the other way,
// measured against the scale of the rounding error of what is compared: a ReLU input z
// against its magnitude s (|z| < tolerance s), two pooled values against the sum of theirs.
// Exact ties (an input exactly 0, two exactly equal maxima) are counted apart: they come from
// identical computations (a zero background, a flat region), which float repeats exactly, and
// every step breaks them as the reference does (steps/ae/README.md, "Kinks").
void find_kinks(const Activations& t, const std::array<Conv, kLayers>& L, int image, double tolerance,
                std::vector<Kink>& kinks, size_t& exact_ties) {
  const Vec* z[4] = {&t.z1, &t.z2, &t.z3, &t.z4};
  const Vec* s[4] = {&t.s1, &t.s2, &t.s3, &t.s4};
  for (int l = 1; l <= 4; ++l) {
    const Vec& v = *z[l - 1];
    const Vec& scale = *s[l - 1];
    for (size_t j = 0; j < v.size(); ++j) {
      if (v[j] == 0)
        ++exact_ties;
      else if (std::fabs(v[j]) < tolerance * scale[j])
        kinks.push_back({l, false, image, j, std::fabs(v[j]) / scale[j], 0, {}, {}});
    }
  }
  const Vec* a[2] = {&t.a1, &t.a2};
  const std::vector<size_t>* from[2] = {&t.from1, &t.from2};
  for (int l = 1; l <= 2; ++l) {
    const Vec& v = *a[l - 1];
    const Vec& scale = *s[l - 1];
    const int h = L[size_t(l - 1)].height, w = L[size_t(l - 1)].width;
    for (size_t o = 0; o < from[l - 1]->size(); ++o) {
      const size_t i = (*from[l - 1])[o];
      // Units that are all off pass no gradient, whichever is taken.
      if (!(v[i] > 0)) continue;
      // Every other input of the window against the maximum: float may round any of those
      // within its rounding error above it, an exact tie among the others included.
      const int c = int(o / (size_t(h / 2) * (w / 2))), y = int(o / (w / 2) % (h / 2)), x = int(o % (w / 2));
      bool tied = false;
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const size_t j = at(c, 2 * y + dy, 2 * x + dx, h, w);
          if (j == i) continue;
          const double gap = v[i] - v[j], both = scale[i] + scale[j];
          if (gap == 0)
            tied = true;
          else if (gap < tolerance * both)
            kinks.push_back({l, true, image, o, gap / both, j, {}, {}});
        }
      exact_ties += tied;
    }
  }
}

}  // namespace

double loss(const Model& m, const std::vector<double>& params, const float* images, int n) {
  const auto L = layers(m);
  const size_t image_size = size_t(m.channels) * m.height * m.width;
  Activations t;
  double sum = 0;
  for (int b = 0; b < n; ++b) {
    forward(m, L, params.data(), images + size_t(b) * image_size, t);
    sum += image_error(t);
  }
  return sum / (double(n) * double(image_size));
}

LossAndGradient loss_and_gradient(const Model& m, const std::vector<double>& params, const float* images, int n,
                                  double kink_tolerance, size_t max_kinks, const Rounding* rounding) {
  const auto L = layers(m);
  const double* p = params.data();
  const size_t image_size = size_t(m.channels) * m.height * m.width;
  LossAndGradient r;
  const double scale = 2.0 / (double(n) * double(image_size));  // d loss / d y = scale (y - x)
  const bool kinks = kink_tolerance > 0;
  // The images are independent: each has its own activations, upstream gradients (kept for the
  // alternatives), gradient, error and decisions, and they are added in image order afterwards,
  // so the result is the same bit for bit as one image after the other (each image adds one
  // term to each parameter's gradient).
  const size_t count = size_t(std::max(n, 0));
  std::vector<Activations> t(count);
  std::vector<Upstream> up(kinks ? count : 0);
  std::vector<Vec> gradient(count);
  std::vector<double> error(count);
  std::vector<std::vector<Kink>> found(count);
  std::vector<size_t> ties(count, 0);
#pragma omp parallel for schedule(dynamic, 1)
  for (int b = 0; b < n; ++b) {
    Activations& tb = t[size_t(b)];
    gradient[size_t(b)].assign(params.size(), 0.0);
    forward(m, L, p, images + size_t(b) * image_size, tb, kinks, rounding);
    error[size_t(b)] = image_error(tb);
    backward(L, p, tb, scale, gradient[size_t(b)].data(), kinks ? &up[size_t(b)] : nullptr, rounding);
    if (kinks) find_kinks(tb, L, b, kink_tolerance, found[size_t(b)], ties[size_t(b)]);
    if (!kinks) tb = Activations();  // not needed again
  }
  double sum = 0;
  r.gradient = n > 0 ? std::move(gradient[0]) : Vec(params.size(), 0.0);
  for (int b = 0; b < n; ++b) {
    if (b > 0) {
      for (size_t j = 0; j < params.size(); ++j) r.gradient[j] += gradient[size_t(b)][j];
      Vec().swap(gradient[size_t(b)]);
    }
    sum += error[size_t(b)];
    r.kinks.insert(r.kinks.end(), found[size_t(b)].begin(), found[size_t(b)].end());
    r.exact_ties += ties[size_t(b)];
  }
  // Only the closest calls are examined: a float step's rounding reaches ~1e-6 of the magnitude.
  r.kinks_found = r.kinks.size();
  std::sort(r.kinks.begin(), r.kinks.end(), [](const Kink& a, const Kink& b) { return a.margin < b.margin; });
  if (r.kinks.size() > max_kinks) r.kinks.resize(max_kinks);
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t i = 0; i < r.kinks.size(); ++i) {
    Kink& k = r.kinks[i];
    alternative(k, L, p, t[size_t(k.image)], up[size_t(k.image)], params.size(), k.index, k.value, rounding);
  }
  r.loss = sum / (double(n) * double(image_size));
  return r;
}

void sgd_update(std::vector<double>& params, std::vector<double>& velocity, const std::vector<double>& gradient,
                double lr, double momentum) {
  for (size_t i = 0; i < params.size(); ++i) {
    velocity[i] = momentum * velocity[i] + gradient[i];
    params[i] -= lr * velocity[i];
  }
}

ForwardDecisions forward_decisions(const Model& m, const std::vector<double>& params, const float* image,
                                   const Rounding* rounding) {
  Activations t;
  forward(m, layers(m), params.data(), image, t, true, rounding);
  ForwardDecisions d;
  d.z[0] = std::move(t.z1), d.z[1] = std::move(t.z2), d.z[2] = std::move(t.z3), d.z[3] = std::move(t.z4);
  d.magnitude[0] = std::move(t.s1), d.magnitude[1] = std::move(t.s2);
  d.magnitude[2] = std::move(t.s3), d.magnitude[3] = std::move(t.s4);
  d.from[0] = std::move(t.from1), d.from[1] = std::move(t.from2);
  return d;
}

std::vector<double> reconstruct(const Model& m, const std::vector<double>& params, const float* image) {
  Activations t;
  forward(m, layers(m), params.data(), image, t);
  return t.y;
}

}  // namespace ae::reference
