// Per-thread scratch: one grid and one field per polarization, and the stands' autocorrelations.
struct Workspace {
  fftwf_complex* grid[2] = {nullptr, nullptr};
  fftwf_complex* field[2] = {nullptr, nullptr};
  std::vector<int> xx, yy, xy_re, xy_im;  // per stand, summed over the samples: exact in integers
  std::vector<float> beam_x, beam_y;      // per stand, |X_a(l)|^2 and |Y_a(m)|^2 (subtract_autos)
};

class Cpu final : public Step {
 public:
  ~Cpu() override { release(); }

  void load(const Inputs& in) override {
    in_ = in;
    if (in.image_size != n_ || int(work_.size()) != omp_get_max_threads()) {
      release();
      n_ = in.image_size;
      work_.resize(size_t(omp_get_max_threads()));
      for (Workspace& w : work_)
        for (int p = 0; p < 2; ++p) {
          w.grid[p] = fftwf_alloc_complex(size_t(n_) * n_);
          w.field[p] = fftwf_alloc_complex(size_t(n_) * n_);
          if (!w.grid[p] || !w.field[p]) throw std::bad_alloc();
        }
      // One plan for the shape, executed by every thread on its own arrays (fftwf_execute_dft
      // is thread-safe; the arrays share fftwf_alloc's alignment). FFTW_ESTIMATE: the same
      // algorithm on every run, so the same bits.
      const int sign = FFTW_BACKWARD;  // exp(+2 pi i k.j / N): the sky from the aperture
      plan_ = fftwf_plan_dft_2d(n_, n_, work_[0].grid[0], work_[0].field[0], sign, FFTW_ESTIMATE);
      if (!plan_) throw std::runtime_error("fftwf_plan_dft_2d failed");
      cos_.resize(size_t(n_));
      sin_.resize(size_t(n_));
      for (int k = 0; k < n_; ++k) {
        cos_[size_t(k)] = float(std::cos(2 * core::kPi * k / n_));
        sin_[size_t(k)] = float(std::sin(2 * core::kPi * k / n_));
      }
    }
    for (Workspace& w : work_) {
      w.xx.assign(size_t(in.stands), 0);
      w.yy.assign(size_t(in.stands), 0);
      w.xy_re.assign(size_t(in.stands), 0);
      w.xy_im.assign(size_t(in.stands), 0);
    }
    image_.assign(in.image_values(), 0.0f);
  }

  void compute() override {
#pragma omp parallel for schedule(dynamic, 1)
    for (int c = 0; c < in_.channels; ++c) image_channel(c, work_[size_t(omp_get_thread_num())]);
  }

  void store(float* image) override { std::copy(image_.begin(), image_.end(), image); }

  void describe(core::Fields& params) const override {
    params.set("threads", int(work_.size()));
    params.set("fft", "fftw3f 2D, FFTW_ESTIMATE, one plan");
  }

 private:
  void image_channel(int c, Workspace& w) {
    const int n = n_, mask = n - 1, S = in_.support, A = in_.stands, P = in_.pols;
    const size_t nn = size_t(n) * n, plane_stride = size_t(in_.channels) * nn;
    float* out = image_.data() + size_t(c) * nn;  // plane q of this channel at out + q * plane_stride
    for (int q = 0; q < in_.planes; ++q) std::fill(out + q * plane_stride, out + q * plane_stride + nn, 0.0f);
    std::fill(w.xx.begin(), w.xx.end(), 0);
    std::fill(w.yy.begin(), w.yy.end(), 0);
    std::fill(w.xy_re.begin(), w.xy_re.end(), 0);
    std::fill(w.xy_im.begin(), w.xy_im.end(), 0);
    const int32_t* cx = in_.cell_x + size_t(c) * A;
    const int32_t* cy = in_.cell_y + size_t(c) * A;
    const float* wx = in_.weight_x + size_t(c) * A * S;
    const float* wy = in_.weight_y + size_t(c) * A * S;
    const int gridded_pols = P;
    const int samples = in_.samples_per_gulp * in_.gulps;
    for (int t = 0; t < samples; ++t) {
      const uint8_t* v = in_.voltages + (size_t(t) * in_.channels + c) * A * P;
      for (int p = 0; p < P; ++p) std::memset(w.grid[p], 0, nn * sizeof(fftwf_complex));
      // Grid: each stand's voltage, times the kernel weights, into its S x S cells.
      for (int a = 0; a < A; ++a) {
        int re[2] = {0, 0}, im[2] = {0, 0};
        for (int p = 0; p < P; ++p) {
          re[p] = nibble_re(v[a * P + p]);
          im[p] = nibble_im(v[a * P + p]);
        }
        for (int p = 0; p < gridded_pols; ++p) {
          if (re[p] == 0 && im[p] == 0) continue;
          for (int i = 0; i < S; ++i) {
            fftwf_complex* row = w.grid[p] + size_t((cy[a] + i) & mask) * n;
            for (int k = 0; k < S; ++k) {
              const float weight = wy[a * S + i] * wx[a * S + k];
              fftwf_complex& cell = row[(cx[a] + k) & mask];
              cell[0] += weight * float(re[p]);
              cell[1] += weight * float(im[p]);
            }
          }
        }
        if (in_.remove_autos) {
          w.xx[size_t(a)] += re[0] * re[0] + im[0] * im[0];
          if (P > 1) {
            w.yy[size_t(a)] += re[1] * re[1] + im[1] * im[1];
            w.xy_re[size_t(a)] += re[0] * re[1] + im[0] * im[1];  // E_x conj(E_y)
            w.xy_im[size_t(a)] += im[0] * re[1] - re[0] * im[1];
          }
        }
      }
      for (int p = 0; p < P; ++p) fftwf_execute_dft(plan_, w.grid[p], w.field[p]);
      cross_multiply(w, out, plane_stride);
    }
    if (in_.remove_autos) subtract_autos(c, w, out, plane_stride);
    // Grid correction: the kernel's taper, divided out of the finished image.
    for (int q = 0; q < in_.planes; ++q)
      for (int m = 0; m < n; ++m)
        for (int l = 0; l < n; ++l) out[q * plane_stride + size_t(m) * n + l] *= in_.correction[m] * in_.correction[l];
  }

  // Adds the products of this sample's fields to the channel's planes. The FFT's pixel j is the
  // image's pixel (j + N/2) mod N: the zero of l and m moves to the centre.
  void cross_multiply(const Workspace& w, float* out, size_t plane_stride) const {
    const int n = n_, mask = n - 1, half = n / 2;
    const fftwf_complex* fx = w.field[0];
    const fftwf_complex* fy = in_.pols > 1 ? w.field[1] : w.field[0];
    size_t q = 0;
    for (int k = 0; k < in_.product_count; ++k) {
      const Product pr = in_.products[k];
      float* re_plane = out + q * plane_stride;
      float* im_plane = is_complex(pr) ? out + (q + 1) * plane_stride : nullptr;
      for (int jy = 0; jy < n; ++jy) {
        const int m = (jy + half) & mask;
        for (int jx = 0; jx < n; ++jx) {
          const int l = (jx + half) & mask;
          const size_t dst = size_t(m) * n + l;
          const size_t src = size_t(jy) * n + jx;
          const float xr = fx[src][0], xi = fx[src][1], yr = fy[src][0], yi = fy[src][1];
          switch (pr) {
            case Product::XX: re_plane[dst] += xr * xr + xi * xi; break;
            case Product::YY: re_plane[dst] += yr * yr + yi * yi; break;
            case Product::I: re_plane[dst] += xr * xr + xi * xi + yr * yr + yi * yi; break;
            case Product::XY:  // F_X conj(F_Y)
              re_plane[dst] += xr * yr + xi * yi;
              im_plane[dst] += xi * yr - xr * yi;
              break;
            case Product::YX:  // F_Y conj(F_X)
              re_plane[dst] += xr * yr + xi * yi;
              im_plane[dst] += xr * yi - xi * yr;
              break;
          }
        }
      }
      q += is_complex(pr) ? 2 : 1;
    }
  }

  // The a = b terms of the image, sum_a P_a |A_a(j)|^2, with P_a the stand's autocorrelation
  // summed over the samples and A_a(j) = X_a(l) Y_a(m) the transform of its gridded kernel.
  // |X_a(l)|^2 = |sum_s w_s exp(2 pi i s (l - N/2) / N)|^2 does not depend on where the stand is,
  // only on its weights. Summed pixel by pixel, every term is computed to its own relative
  // precision: after the grid correction (up to 1/C^(1/2)^4 at the corners) the subtraction
  // stays at float rounding. (Gridding the autocorrelations with the kernel's correlation and
  // transforming them once gives the same image in exact arithmetic, but a float FFT's error
  // is the same absolute size at every pixel, and the correction magnifies it at the edges.)
  void subtract_autos(int c, Workspace& w, float* out, size_t plane_stride) {
    const int n = n_, S = in_.support, A = in_.stands;
    const float* wx = in_.weight_x + size_t(c) * A * S;
    const float* wy = in_.weight_y + size_t(c) * A * S;
    w.beam_x.resize(size_t(A) * n);
    w.beam_y.resize(size_t(A) * n);
    for (int a = 0; a < A; ++a)
      for (int i = 0; i < n; ++i) {
        float xr = 0, xi = 0, yr = 0, yi = 0;
        for (int s = 0; s < S; ++s) {
          const float cs = cos_[size_t((s * (i - n / 2) + n * S) % n)], sn = sin_[size_t((s * (i - n / 2) + n * S) % n)];
          xr += wx[a * S + s] * cs, xi += wx[a * S + s] * sn;
          yr += wy[a * S + s] * cs, yi += wy[a * S + s] * sn;
        }
        w.beam_x[size_t(a) * n + i] = xr * xr + xi * xi;
        w.beam_y[size_t(a) * n + i] = yr * yr + yi * yi;
      }
    size_t q = 0;
    for (int k = 0; k < in_.product_count; ++k) {
      const Product pr = in_.products[k];
      float* re_plane = out + q * plane_stride;
      float* im_plane = is_complex(pr) ? out + (q + 1) * plane_stride : nullptr;
      for (int a = 0; a < A; ++a) {
        float pre = 0, pim = 0;
        switch (pr) {
          case Product::XX: pre = float(w.xx[size_t(a)]); break;
          case Product::YY: pre = float(w.yy[size_t(a)]); break;
          case Product::I: pre = float(w.xx[size_t(a)] + w.yy[size_t(a)]); break;
          case Product::XY: pre = float(w.xy_re[size_t(a)]), pim = float(w.xy_im[size_t(a)]); break;
          case Product::YX: pre = float(w.xy_re[size_t(a)]), pim = -float(w.xy_im[size_t(a)]); break;
        }
        const float* bx = &w.beam_x[size_t(a) * n];
        for (int m = 0; m < n; ++m) {
          const float by = w.beam_y[size_t(a) * n + m];
          float* row = re_plane + size_t(m) * n;
          for (int l = 0; l < n; ++l) row[l] -= pre * by * bx[l];
          if (im_plane) {
            float* row_im = im_plane + size_t(m) * n;
            for (int l = 0; l < n; ++l) row_im[l] -= pim * by * bx[l];
          }
        }
      }
      q += is_complex(pr) ? 2 : 1;
    }
  }

  void release() {
    for (Workspace& w : work_)
      for (int p = 0; p < 2; ++p) {
        fftwf_free(w.grid[p]);
        fftwf_free(w.field[p]);
      }
    work_.clear();
    if (plan_) fftwf_destroy_plan(plan_);
    plan_ = nullptr;
    n_ = 0;
  }

  Inputs in_{};
  int n_ = 0;
  fftwf_plan plan_ = nullptr;
  std::vector<float> cos_, sin_;  // exp(2 pi i k / N)
  std::vector<Workspace> work_;
  std::vector<float> image_;
};
