constexpr int kMaxWidth = 8;  // cells per axis a sample reaches: at most kMaxWidth + 1
constexpr double kOversampling = 2;  // sigma: the width rule holds its tolerance here (es_kernel.hpp)
// FINUFFT's width rule (es_kernel_for) at t measured up to 1.2 t on a partial trajectory at the
// edge of k-space (`mri_gridding_accuracy --kernel es --samples 1500`): asked for t / 10, it
// gives one cell more, and the error stays under t.
constexpr double kMargin = 10;

struct Grid {
  int g[3];         // oversampled points per axis
  float sigma[3];   // g / n: the grid's own oversampling, so that voxels land on FFT bins
  int width;        // W
  float beta;       // the kernel's shape
};

// A bin is kBin^3 grid cells; a sample in bin b of an axis (cells kBin b .. kBin b + kBin - 1)
// reaches cells kBin b - W/2 .. kBin b + kBin - 1 + ceil(W/2): a subgrid of kBin + W per axis.
constexpr int kBin = 8;

struct Bins {
  int n[3];  // bins per axis: ceil(g / kBin) (the last one partial where kBin does not divide g)
};

// A sample's position in grid cells along one axis, wrapped onto the periodic grid [0, g).
__device__ float wrapped(float k, float sigma, int g) {
  float s = k * sigma;
  s -= float(g) * floorf(s / float(g));
  return s < float(g) ? s : 0.0f;  // -1e-9 wraps to g - 1e-9, which rounds to g: that is cell 0
}

// Plan, step 1: each sample's wrapped position, its bin, and its rank among its bin's samples.
__global__ void bin_samples(const float* kx, const float* ky, const float* kz, int numK, Grid gr, Bins bins,
                            float* sx, float* sy, float* sz, int* bin_of, int* rank, int* count) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  const float x = wrapped(kx[m], gr.sigma[0], gr.g[0]), y = wrapped(ky[m], gr.sigma[1], gr.g[1]),
              z = wrapped(kz[m], gr.sigma[2], gr.g[2]);
  const int b = (int(z) / kBin * bins.n[1] + int(y) / kBin) * bins.n[0] + int(x) / kBin;
  sx[m] = x, sy[m] = y, sz[m] = z;
  bin_of[m] = b;
  rank[m] = atomicAdd(&count[b], 1);
}

// Plan, step 3 (step 2, the prefix sum over the bins, is the host's): each sample's position
// and index in bin order.
__global__ void place_samples(const float* sx, const float* sy, const float* sz, const int* bin_of, const int* rank,
                              const int* bin_start, int numK, float* px, float* py, float* pz, int* order) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  const int j = bin_start[bin_of[m]] + rank[m];
  px[j] = sx[m], py[j] = sy[m], pz[j] = sz[m];
  order[j] = m;
}

// The kernel's weights along one axis for a sample at s grid cells: cells ceil(s - W/2) ..
// floor(s + W/2), returned as the first one's offset from the subgrid's origin o.
__device__ int axis_weights(float s, const Grid& gr, int o, float (&w)[kMaxWidth + 1], int& first) {
  const int lo = int(ceilf(s - 0.5f * gr.width)), hi = int(floorf(s + 0.5f * gr.width));
  int n = 0;
  for (int q = lo; q <= hi && n <= kMaxWidth; ++q, ++n) {
    const float r = 2.0f * (float(q) - s) / float(gr.width);
    w[n] = fabsf(r) <= 1.0f ? expf(gr.beta * (sqrtf(fmaxf(0.0f, 1.0f - r * r)) - 1.0f)) : 0.0f;
  }
  first = lo - o;
  return n;
}
