// The images an autoencoder trains on, as float pixels in [0, 1], NCHW:
//   - synthetic: smooth random shapes on smooth backgrounds, generated from a seed (defaults, tests);
//   - CIFAR-10 binary batches (Krizhevsky 2009): 3073-byte records, a label byte then
//     1024 red, 1024 green and 1024 blue bytes, each plane row-major 32x32;
//   - Fashion-MNIST (Xiao et al. 2017) IDX image files, raw or gzip-compressed as Debian's
//     dataset-fashion-mnist installs them: 28x28 grey images, padded to 32x32 with zeros
//     (2 pixels on every side) and replicated to 3 channels, so the same model trains on them.
// Formats and provenance: datasets/ae.md. Every reader refuses a file it does not fully
// understand with core::UsageError naming the file and what is wrong.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ae {

struct ImageSet {
  std::string source;  // "synthetic" | "cifar-10" | "fashion-mnist"
  std::string origin;  // the files read, or the generator and its seed
  int count = 0, channels = 3, height = 32, width = 32;
  std::vector<float> pixels;  // count x channels x height x width

  size_t image_size() const { return size_t(channels) * height * width; }
  const float* image(size_t i) const { return pixels.data() + i * image_size(); }
};

// `count` synthetic images; image i depends only on (seed, i, the image size), not on count.
ImageSet synthetic_images(int count, int channels, int height, int width, uint64_t seed);

// CIFAR-10: the images of `files` in order, at most `limit` of them (0: all). Each file must be
// a whole, non-zero number of 3073-byte records with labels 0..9.
ImageSet read_cifar10(const std::vector<std::string>& files, size_t limit = 0);
// The files of a split in the folder of the binary version (cifar-10-batches-bin):
// train = data_batch_1.bin .. data_batch_5.bin (50,000 images), test = test_batch.bin (10,000).
std::vector<std::string> cifar10_files(const std::string& dir, const std::string& split);

// One IDX image file (magic 0x00000803: unsigned bytes, 3 dimensions, big-endian sizes), at
// most `limit` images. A name ending in .gz is decompressed (zlib); gzip data under another
// name is refused, as are a wrong magic, images larger than 32x32, and a size that does not
// match the header (truncated or trailing bytes).
ImageSet read_idx_images(const std::string& path, size_t limit = 0);
// The image file of a split in a Fashion-MNIST folder: train-images-idx3-ubyte (60,000
// images) or t10k-images-idx3-ubyte (10,000), raw or with .gz.
std::string fashion_mnist_file(const std::string& dir, const std::string& split);

// True when this build reads .gz files (zlib was found).
bool have_zlib();

}  // namespace ae
