#include "ae/data.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>

#include "core/error.hpp"
#include "core/files.hpp"
#include "ae/model.hpp"

#ifdef STEPWISE_AE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace ae {

namespace {

// ---------------------------------------------------------------- synthetic images

struct Rgb {
  double c[3];
};

Rgb random_colour(SplitMix64& rng) { return {{rng.uniform(), rng.uniform(), rng.uniform()}}; }

// A shape with a soft (anti-aliased, one pixel wide) edge: an ellipse or a rectangle, rotated.
struct Shape {
  bool ellipse;
  double cx, cy, a, b, cos_t, sin_t;
  Rgb colour;
  double opacity;

  // Signed distance to the edge in pixels (negative inside), approximate for ellipses.
  double distance(double x, double y) const {
    const double dx = x - cx, dy = y - cy;
    const double u = cos_t * dx + sin_t * dy, v = -sin_t * dx + cos_t * dy;
    if (ellipse) return (std::sqrt((u / a) * (u / a) + (v / b) * (v / b)) - 1.0) * std::min(a, b);
    const double qx = std::fabs(u) - a, qy = std::fabs(v) - b;
    const double ox = std::max(qx, 0.0), oy = std::max(qy, 0.0);
    return std::sqrt(ox * ox + oy * oy) + std::min(std::max(qx, qy), 0.0);
  }
};

void draw_image(float* out, int channels, int height, int width, uint64_t seed, uint64_t index) {
  SplitMix64 rng(seed ^ (index * 0xd1b54a32d192ed03ull) ^ 0x5a17e71c0ffee000ull);
  const double size = std::min(height, width);
  // Background: a linear blend of two colours along a random direction.
  const Rgb c0 = random_colour(rng), c1 = random_colour(rng);
  const double angle = 2 * 3.14159265358979323846 * rng.uniform();
  const double gx = std::cos(angle) / size, gy = std::sin(angle) / size;
  Shape shapes[4];
  const int n_shapes = 2 + int(rng.next() % 3);
  for (int s = 0; s < n_shapes; ++s) {
    Shape& sh = shapes[s];
    sh.ellipse = rng.next() & 1;
    sh.cx = width * rng.uniform();
    sh.cy = height * rng.uniform();
    sh.a = size * (0.08 + 0.25 * rng.uniform());
    sh.b = size * (0.08 + 0.25 * rng.uniform());
    const double t = 3.14159265358979323846 * rng.uniform();
    sh.cos_t = std::cos(t);
    sh.sin_t = std::sin(t);
    sh.colour = random_colour(rng);
    sh.opacity = 0.6 + 0.4 * rng.uniform();
  }
  const size_t plane = size_t(height) * width;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const double px = x + 0.5, py = y + 0.5;
      const double t = std::clamp(0.5 + gx * (px - 0.5 * width) + gy * (py - 0.5 * height), 0.0, 1.0);
      double v[3];
      for (int c = 0; c < 3; ++c) v[c] = c0.c[c] + (c1.c[c] - c0.c[c]) * t;
      for (int s = 0; s < n_shapes; ++s) {
        const double cover = std::clamp(0.5 - shapes[s].distance(px, py), 0.0, 1.0) * shapes[s].opacity;
        for (int c = 0; c < 3; ++c) v[c] += (shapes[s].colour.c[c] - v[c]) * cover;
      }
      // A faint texture: without it, flat regions give exactly equal neighbours, and max
      // pooling's choice among them would rest on rounding alone.
      for (int c = 0; c < channels; ++c) {
        const double noise = 0.03 * (rng.uniform() - 0.5);
        out[c * plane + size_t(y) * width + x] = float(std::clamp(v[c % 3] + noise, 0.0, 1.0));
      }
    }
}

// ---------------------------------------------------------------- files

std::vector<unsigned char> read_all(const std::string& path) {
  std::ifstream in = core::open_input_file(path);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw core::UsageError(path + ": read error");
  return bytes;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_gzip(const std::vector<unsigned char>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

// The largest IDX image file the reader accepts decompressed: a million 32x32 images (1 GB;
// Fashion-MNIST's training file is 47 MB), so that a corrupt or hostile file cannot fill memory.
constexpr size_t kMaxIdxBytes = 16 + size_t(1000000) * 32 * 32;

std::vector<unsigned char> gunzip(const std::string& path, const std::vector<unsigned char>& packed) {
#ifdef STEPWISE_AE_HAVE_ZLIB
  if (!is_gzip(packed))
    throw core::UsageError(path + ": the name ends in .gz but the file is not gzip data (no 1f 8b magic)");
  if (packed.size() > kMaxIdxBytes) throw core::UsageError(path + ": larger than any IDX image file the model can take");
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw core::RuntimeError(path + ": inflateInit2 failed");
  std::vector<unsigned char> out;
  unsigned char chunk[1 << 16];
  z.next_in = const_cast<unsigned char*>(packed.data());
  z.avail_in = uInt(packed.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      throw core::UsageError(path + ": corrupt or truncated gzip data" + (z.msg ? std::string(" (") + z.msg + ")" : std::string()));
    }
    out.insert(out.end(), chunk, chunk + (sizeof chunk - z.avail_out));
    if (out.size() > kMaxIdxBytes) {
      inflateEnd(&z);
      throw core::UsageError(path + ": decompresses to more than " + std::to_string(kMaxIdxBytes) +
                             " bytes, more than any IDX image file the model can take");
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      throw core::UsageError(path + ": truncated gzip data (the stream ends early)");
    }
  }
  const size_t rest = z.avail_in;
  inflateEnd(&z);
  if (rest != 0) throw core::UsageError(path + ": " + std::to_string(rest) + " bytes after the end of the gzip stream");
  return out;
#else
  (void)packed;
  throw core::UsageError(path + ": is gzip-compressed and this build has no zlib; decompress it first "
                         "(gunzip -k " + path + ") and give the folder of the raw file");
#endif
}

uint32_t big_endian(const unsigned char* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

}  // namespace

bool have_zlib() {
#ifdef STEPWISE_AE_HAVE_ZLIB
  return true;
#else
  return false;
#endif
}

ImageSet synthetic_images(int count, int channels, int height, int width, uint64_t seed) {
  ImageSet s;
  s.source = "synthetic";
  s.origin = "synthetic shapes, seed " + std::to_string(seed);
  s.count = count;
  s.channels = channels;
  s.height = height;
  s.width = width;
  s.pixels.resize(size_t(count) * s.image_size());
#pragma omp parallel for schedule(static)
  for (int i = 0; i < count; ++i)
    draw_image(s.pixels.data() + size_t(i) * s.image_size(), channels, height, width, seed, uint64_t(i));
  return s;
}

// ---------------------------------------------------------------- CIFAR-10

constexpr size_t kCifarPixels = 3 * 32 * 32;
constexpr size_t kCifarRecord = 1 + kCifarPixels;

std::vector<std::string> cifar10_files(const std::string& dir, const std::string& split) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  if (split == "train")
    for (int i = 1; i <= 5; ++i) names.push_back("data_batch_" + std::to_string(i) + ".bin");
  else if (split == "test")
    names.push_back("test_batch.bin");
  else
    throw core::UsageError("--split " + split + ": want train or test");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw core::UsageError("--cifar-dir " + dir + ": not a folder");
  std::vector<std::string> files;
  for (const std::string& n : names) {
    const std::string path = (fs::path(dir) / n).string();
    if (!fs::exists(path, ec))
      throw core::UsageError("--cifar-dir " + dir + ": " + n + " is missing (want the binary version, "
                             "cifar-10-batches-bin: data_batch_1..5.bin and test_batch.bin)");
    files.push_back(path);
  }
  return files;
}

ImageSet read_cifar10(const std::vector<std::string>& files, size_t limit) {
  ImageSet s;
  s.source = "cifar-10";
  for (const std::string& path : files) {
    if (limit && size_t(s.count) >= limit) break;
    const std::vector<unsigned char> bytes = read_all(path);
    if (bytes.empty()) throw core::UsageError(path + ": empty file, not a CIFAR-10 batch");
    if (bytes.size() % kCifarRecord != 0)
      throw core::UsageError(path + ": " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                             std::to_string(kCifarRecord) + "-byte CIFAR-10 records (label + 3072 pixels): "
                             "truncated, or not a CIFAR-10 binary batch");
    const size_t records = bytes.size() / kCifarRecord;
    for (size_t r = 0; r < records; ++r)
      if (bytes[r * kCifarRecord] > 9)
        throw core::UsageError(path + ": record " + std::to_string(r) + " has label " +
                               std::to_string(int(bytes[r * kCifarRecord])) + " (CIFAR-10 labels are 0..9): not a CIFAR-10 batch");
    const size_t take = limit ? std::min(records, limit - size_t(s.count)) : records;
    const size_t first = s.pixels.size();
    s.pixels.resize(first + take * kCifarPixels);
    for (size_t r = 0; r < take; ++r)
      for (size_t i = 0; i < kCifarPixels; ++i)
        s.pixels[first + r * kCifarPixels + i] = float(bytes[r * kCifarRecord + 1 + i]) / 255.0f;
    s.count += int(take);
    s.origin += (s.origin.empty() ? "" : ", ") + std::filesystem::path(path).filename().string();
  }
  return s;
}

// ---------------------------------------------------------------- IDX

std::string fashion_mnist_file(const std::string& dir, const std::string& split) {
  namespace fs = std::filesystem;
  std::string name;
  if (split == "train")
    name = "train-images-idx3-ubyte";
  else if (split == "test")
    name = "t10k-images-idx3-ubyte";
  else
    throw core::UsageError("--split " + split + ": want train or test");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw core::UsageError("--idx-dir " + dir + ": not a folder");
  for (const std::string& candidate : {name, name + ".gz"}) {
    const std::string path = (fs::path(dir) / candidate).string();
    if (fs::exists(path, ec)) return path;
  }
  throw core::UsageError("--idx-dir " + dir + ": neither " + name + " nor " + name +
                         ".gz is there (Debian's dataset-fashion-mnist installs them in /usr/share/datasets/fashion-mnist)");
}

ImageSet read_idx_images(const std::string& path, size_t limit) {
  std::vector<unsigned char> bytes = read_all(path);
  if (ends_with(path, ".gz"))
    bytes = gunzip(path, bytes);
  else if (is_gzip(bytes))
    throw core::UsageError(path + ": is gzip-compressed data (magic 1f 8b) under a name without .gz; "
                           "gunzip it, or name it " + path + ".gz");
  if (bytes.size() < 16)
    throw core::UsageError(path + ": truncated: " + std::to_string(bytes.size()) +
                           " bytes, less than the 16-byte header of an IDX image file");
  const uint32_t magic = big_endian(bytes.data());
  if (magic != 0x00000803) {
    char text[64];
    snprintf(text, sizeof text, "0x%08x", unsigned(magic));
    throw core::UsageError(path + ": wrong magic " + text + ", not an IDX image file (want 0x00000803: "
                           "unsigned bytes, 3 dimensions)" + (magic == 0x00000801 ? "; this is an IDX label file" : ""));
  }
  const uint64_t count = big_endian(&bytes[4]), rows = big_endian(&bytes[8]), cols = big_endian(&bytes[12]);
  if (count == 0) throw core::UsageError(path + ": the header says 0 images");
  if (rows == 0 || cols == 0 || rows > 32 || cols > 32)
    throw core::UsageError(path + ": images of " + std::to_string(rows) + "x" + std::to_string(cols) +
                           " (the model takes up to 32x32)");
  const uint64_t want = 16 + count * rows * cols;
  if (bytes.size() < want)
    throw core::UsageError(path + ": truncated: the header says " + std::to_string(count) + " images of " +
                           std::to_string(rows) + "x" + std::to_string(cols) + " (" + std::to_string(want) +
                           " bytes), the file has " + std::to_string(bytes.size()));
  if (bytes.size() > want)
    throw core::UsageError(path + ": " + std::to_string(bytes.size() - want) + " bytes after the " +
                           std::to_string(count) + " images the header announces");
  ImageSet s;
  s.source = "fashion-mnist";
  // The file's name without .gz: the same images make the same problem (and digest), raw or
  // compressed (a GPU machine may hold the file gunzipped).
  s.origin = std::filesystem::path(path).filename().string();
  if (ends_with(s.origin, ".gz")) s.origin.resize(s.origin.size() - 3);
  s.count = int(limit ? std::min<uint64_t>(count, limit) : count);
  s.pixels.assign(size_t(s.count) * s.image_size(), 0.0f);
  // Centred in 32x32 (a 28x28 image gets 2 zero pixels on every side), the same grey in R, G, B.
  const size_t top = (32 - rows) / 2, left = (32 - cols) / 2, plane = 32 * 32;
  for (size_t i = 0; i < size_t(s.count); ++i)
    for (size_t y = 0; y < rows; ++y)
      for (size_t x = 0; x < cols; ++x) {
        const float v = float(bytes[16 + (i * rows + y) * cols + x]) / 255.0f;
        for (size_t c = 0; c < 3; ++c) s.pixels[i * s.image_size() + c * plane + (top + y) * 32 + left + x] = v;
      }
  return s;
}

}  // namespace ae
