// Unit tests of the AE track: the model's size and cost, He initialization, the reference's
// gradient against central finite differences, the minibatch gradient as the mean of the
// images' gradients, the readers on files written here in the exact CIFAR-10 and IDX formats
// (and corrupt ones refused by name), the synthetic images and the weight files.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ae/data.hpp"
#include "core/error.hpp"
#include "ae/model.hpp"
#include "core/npy.hpp"
#include "ae/problem.hpp"
#include "ae/reference.hpp"
#include "ae/validation.hpp"

#ifdef STEPWISE_AE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace ae {
namespace {

namespace fs = std::filesystem;

// A folder of its own for each test, removed afterwards.
class Scratch {
 public:
  Scratch() {
    static int n = 0;
    dir_ = fs::temp_directory_path() / ("stepwise-ae-test-" + std::to_string(getpid()) + "-" + std::to_string(n++));
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string dir() const { return dir_.string(); }
  void write(const std::string& name, const std::vector<unsigned char>& bytes) const {
    std::ofstream out(path(name), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }

 private:
  fs::path dir_;
};

// Runs f and insists that it throws core::UsageError with every one of `texts` in its message.
void expect_usage_error(const std::function<void()>& f, const std::vector<std::string>& texts) {
  try {
    f();
    ADD_FAILURE() << "no UsageError";
  } catch (const core::UsageError& e) {
    for (const std::string& t : texts) EXPECT_NE(std::string(e.what()).find(t), std::string::npos) << e.what() << " lacks '" << t << "'";
  }
}

Model tiny_model() {
  Model m;
  m.height = m.width = 8;
  m.enc1 = 4, m.enc2 = 2, m.dec1 = 2, m.dec2 = 4;
  return m;
}

// ---------------------------------------------------------------- the model

TEST(Model, FullModelHas751875Parameters) {
  const Model m = Model::full();
  EXPECT_EQ(parameter_count(m), 751875u);
  size_t sum = 0;
  for (const Tensor& t : tensors(m)) {
    size_t n = 1;
    for (size_t d : t.shape) n *= d;
    EXPECT_EQ(n, t.count) << t.name;
    EXPECT_EQ(t.offset, sum) << t.name;  // contiguous, in order
    sum += t.count;
  }
  EXPECT_EQ(sum, 751875u);
  const std::vector<Tensor> t = tensors(m);
  ASSERT_EQ(t.size(), 10u);
  EXPECT_EQ(t[0].name, "conv1.weight");
  EXPECT_EQ(t[0].shape, (std::vector<size_t>{256, 3, 3, 3}));
  EXPECT_EQ(t[3].shape, (std::vector<size_t>{128}));
  EXPECT_EQ(t[8].shape, (std::vector<size_t>{3, 256, 3, 3}));
}

TEST(Model, TrainingCostsAbout1Point03GflopPerImage) {
  const Model m = Model::full();
  // Forward: 2 x (256*3 + 128*256 ... ) * 9 * pixels per layer; training: 3 x forward less
  // conv1's input gradient.
  EXPECT_DOUBLE_EQ(forward_flop_per_image(m), 349175808.0);
  EXPECT_DOUBLE_EQ(training_flop_per_image(m), 1033371648.0);
}

TEST(Model, LayersFollowTheImageSize) {
  const auto L = layers(Model::full());
  EXPECT_EQ(L[0].height, 32);
  EXPECT_EQ(L[1].height, 16);
  EXPECT_EQ(L[2].height, 8);  // the latent 128 x 8 x 8
  EXPECT_EQ(L[2].in, 128);
  EXPECT_EQ(L[3].height, 16);
  EXPECT_EQ(L[4].height, 32);
  EXPECT_EQ(L[4].out, 3);
}

TEST(HeInitialization, IsDeterministicAndHasTheVarianceOfHeEtAl) {
  const Model m = Model::full();
  const std::vector<float> a = he_initialization(m, 7), b = he_initialization(m, 7), c = he_initialization(m, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (const Conv& l : layers(m)) {
    double sum = 0, sum2 = 0;
    for (size_t j = 0; j < l.weight_count(); ++j) {
      sum += a[l.weight + j];
      sum2 += double(a[l.weight + j]) * a[l.weight + j];
    }
    const double n = double(l.weight_count()), variance = sum2 / n - (sum / n) * (sum / n);
    const double want = 2.0 / (l.in * 9.0);
    // The sample variance of n normals has a relative standard deviation sqrt(2 / n).
    EXPECT_NEAR(variance / want, 1.0, 5 * std::sqrt(2.0 / n)) << "layer " << l.in << "->" << l.out;
    for (int o = 0; o < l.out; ++o) EXPECT_EQ(a[l.bias + o], 0.0f);
  }
}

TEST(HeInitialization, KnownFirstValues) {
  // Pinned: a change of the generator or of its seeding changes every recorded run.
  const std::vector<float> a = he_initialization(Model::full(), 1);
  const auto L = layers(Model::full());
  EXPECT_EQ(a[0], -0x1.930494p-3f);
  EXPECT_EQ(a[L[1].weight], -0x1.71d9dap-6f);
  EXPECT_EQ(a[L[4].bias - 1], -0x1.00245ep-5f);
}

// ---------------------------------------------------------------- the reference

std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

TEST(Reference, GradientMatchesCentralDifferencesForEveryTensor) {
  const Model m = tiny_model();
  const std::vector<double> params = to_double(he_initialization(m, 3));
  const ImageSet images = synthetic_images(3, 3, 8, 8, 11);
  const int n = 3;
  const reference::LossAndGradient r = reference::loss_and_gradient(m, params, images.pixels.data(), n);
  EXPECT_NEAR(r.loss, reference::loss(m, params, images.pixels.data(), n), 1e-14);
  // Step 1e-6: the truncation error (h^2) and the rounding error (1e-16 / h) are both below
  // 1e-9 of the gradient; a smaller step only adds rounding, a larger one risks moving a ReLU
  // or a pooling choice across its kink, where the loss has no derivative.
  const double h = 1e-6;
  for (const Tensor& t : tensors(m)) {
    std::vector<double> fd(t.count), an(t.count);
    for (size_t j = 0; j < t.count; ++j) {
      std::vector<double> p = params;
      p[t.offset + j] = params[t.offset + j] + h;
      const double up = reference::loss(m, p, images.pixels.data(), n);
      p[t.offset + j] = params[t.offset + j] - h;
      const double down = reference::loss(m, p, images.pixels.data(), n);
      fd[j] = (up - down) / (2 * h);
      an[j] = r.gradient[t.offset + j];
    }
    double err = 0, norm = 0;
    for (size_t j = 0; j < t.count; ++j) {
      err += (fd[j] - an[j]) * (fd[j] - an[j]);
      norm += an[j] * an[j];
    }
    EXPECT_GT(norm, 0) << t.name << ": a zero gradient checks nothing";
    EXPECT_LT(std::sqrt(err / norm), 1e-6) << t.name;
    printf("  %-13s relative L2 difference to central differences %.2e\n", t.name.c_str(), std::sqrt(err / norm));
  }
}

TEST(Reference, MinibatchGradientIsTheMeanOfTheImagesGradients) {
  // What a gradient that overwrites instead of accumulating, or that reads another image's
  // activations, gets wrong.
  const Model m = tiny_model();
  const std::vector<double> params = to_double(he_initialization(m, 5));
  const ImageSet images = synthetic_images(4, 3, 8, 8, 2);
  const reference::LossAndGradient batch = reference::loss_and_gradient(m, params, images.pixels.data(), 4);
  std::vector<double> mean(params.size(), 0.0);
  double loss = 0;
  for (int b = 0; b < 4; ++b) {
    const reference::LossAndGradient one = reference::loss_and_gradient(m, params, images.image(b), 1);
    for (size_t j = 0; j < mean.size(); ++j) mean[j] += one.gradient[j] / 4;
    loss += one.loss / 4;
  }
  EXPECT_NEAR(batch.loss, loss, 1e-15);
  for (size_t j = 0; j < mean.size(); ++j) EXPECT_NEAR(batch.gradient[j], mean[j], 1e-14 * (1 + std::fabs(mean[j])));
  // ...and it differs from the last image's alone.
  const reference::LossAndGradient last = reference::loss_and_gradient(m, params, images.image(3), 1);
  double diff = 0;
  for (size_t j = 0; j < mean.size(); ++j) diff = std::max(diff, std::fabs(last.gradient[j] / 4 - mean[j]));
  EXPECT_GT(diff, 1e-3);
}

TEST(Reference, SgdWithMomentumIsPyTorchs) {
  std::vector<double> p = {1.0, 2.0}, v = {0.0, 0.0};
  reference::sgd_update(p, v, {0.5, -1.0}, 0.1, 0.9);  // v = g; p -= lr g
  EXPECT_DOUBLE_EQ(p[0], 0.95);
  EXPECT_DOUBLE_EQ(p[1], 2.1);
  reference::sgd_update(p, v, {0.5, -1.0}, 0.1, 0.9);  // v = 0.9 g + g
  EXPECT_DOUBLE_EQ(v[0], 0.95);
  EXPECT_DOUBLE_EQ(p[0], 0.95 - 0.095);
}

TEST(Reference, KinkAlternativesOfTheFirstLayerTouchOnlyConv1) {
  // A ReLU or pooling decision after conv1 changes only what flows into conv1's gradient.
  const Model m = tiny_model();
  const std::vector<double> params = to_double(he_initialization(m, 3));
  const ImageSet images = synthetic_images(2, 3, 8, 8, 11);
  const reference::LossAndGradient r = reference::loss_and_gradient(m, params, images.pixels.data(), 2, 0.5, 1000);
  ASSERT_GT(r.kinks.size(), 0u);
  EXPECT_EQ(r.kinks.size(), r.kinks_found);
  const size_t conv1_end = layers(m)[1].weight;
  bool first_layer = false;
  for (const reference::Kink& k : r.kinks) {
    EXPECT_LT(k.margin, 0.5);
    if (k.layer != 1) continue;
    first_layer = true;
    for (size_t j : k.index) EXPECT_LT(j, conv1_end);
  }
  EXPECT_TRUE(first_layer);
}

// Across a kink the gradient jumps from `before` to `after`; the kink's alternative followed
// from `before` should land on `after`. Returns the jump's norm and the norm of what is left.
std::pair<double, double> jump_and_error(const reference::LossAndGradient& before,
                                         const reference::LossAndGradient& after, const reference::Kink& k) {
  std::vector<double> followed = before.gradient;
  for (size_t j = 0; j < k.index.size(); ++j) followed[k.index[j]] += k.value[j];
  double jump = 0, err = 0;
  for (size_t j = 0; j < followed.size(); ++j) {
    jump += (after.gradient[j] - before.gradient[j]) * (after.gradient[j] - before.gradient[j]);
    err += (after.gradient[j] - followed[j]) * (after.gradient[j] - followed[j]);
  }
  return {std::sqrt(jump), std::sqrt(err)};
}

TEST(Reference, KinkAlternativeOfAReluUnderPoolingIsTheGradientsJump) {
  // A ReLU after conv1 or conv2 just off, in a pooling window whose other inputs are off too:
  // turned on, it is the window's only positive input, so the window's gradient goes through
  // it. Its alternative must be the jump of the gradient across that kink. The unit is moved to
  // either side of 0 by its channel's bias (the largest input below 0 in that channel, so that
  // no other unit of the channel crosses) and the gradients on the two sides are compared.
  const Model m = tiny_model();
  const auto L = layers(m);
  const std::vector<double> params = to_double(he_initialization(m, 3));
  for (int l = 1; l <= 2; ++l) {
    bool found = false;
    for (int seed = 1; seed <= 20 && !found; ++seed) {
      const ImageSet image = synthetic_images(1, 3, 8, 8, uint64_t(seed));
      const reference::ForwardDecisions d = reference::forward_decisions(m, params, image.pixels.data());
      const std::vector<double>& z = d.z[l - 1];
      const int h = L[size_t(l - 1)].height, w = L[size_t(l - 1)].width;
      for (int c = 0; c < L[size_t(l - 1)].out && !found; ++c) {
        size_t u = 0;
        bool any = false;
        for (size_t j = size_t(c) * h * w; j < size_t(c + 1) * h * w; ++j)
          if (z[j] < 0 && (!any || z[j] > z[u])) u = j, any = true;
        if (!any) continue;
        const size_t y = u % (size_t(h) * w) / size_t(w) / 2 * 2, x = u % size_t(w) / 2 * 2;
        const size_t corner = size_t(c) * h * w + y * size_t(w) + x;
        if (z[corner] > 0 || z[corner + 1] > 0 || z[corner + size_t(w)] > 0 || z[corner + size_t(w) + 1] > 0) continue;
        std::vector<double> off = params, on = params;
        off[L[size_t(l - 1)].bias + size_t(c)] -= z[u] + 1e-9;
        on[L[size_t(l - 1)].bias + size_t(c)] -= z[u] - 1e-9;
        const reference::LossAndGradient g_off = reference::loss_and_gradient(m, off, image.pixels.data(), 1, 1e-6, 1000);
        const reference::LossAndGradient g_on = reference::loss_and_gradient(m, on, image.pixels.data(), 1);
        const reference::Kink* k = nullptr;
        for (const reference::Kink& e : g_off.kinks)
          if (e.layer == l && !e.pool && e.unit == u) k = &e;
        ASSERT_NE(k, nullptr) << "layer " << l << ": the unit is not among the kinks";
        const auto [jump, err] = jump_and_error(g_off, g_on, *k);
        // Where nothing reaches the window from above (the units over it all off) there is no jump.
        if (!(jump > 1e-6)) continue;
        found = true;
        EXPECT_LT(err / jump, 1e-6) << "layer " << l << ": seed " << seed << ", channel " << c;
      }
    }
    EXPECT_TRUE(found) << "layer " << l << ": no such unit with a gradient over it in 20 images";
  }
}

TEST(Reference, AnInputJustBelowTwoTiedMaximaIsAPoolingKink) {
  // A pooling window after conv1 holding two exactly equal maxima and a third input one float
  // step below them: float may round the third above both, so its taking the window's
  // gradient is a kink (not only the runner-up's, which is an exact tie here), and the kink's
  // alternative is the gradient's jump when the third input moves just above them. conv1's
  // first channel is made the identity on the image's first channel, so the window's values
  // are the pixels themselves.
  const Model m = tiny_model();
  const auto L = layers(m);
  std::vector<double> params = to_double(he_initialization(m, 3));
  const Conv& c1 = L[0];
  for (int i = 0; i < c1.in; ++i)
    for (int k = 0; k < 9; ++k) params[c1.weight + size_t(i) * 9 + size_t(k)] = i == 0 && k == 4 ? 1.0 : 0.0;
  params[c1.bias] = 0.0;
  ImageSet image = synthetic_images(1, 3, 8, 8, 5);
  const float top = 0.5f, below = std::nextafter(top, 0.0f), above = std::nextafter(top, 1.0f);
  const int w = c1.width;
  image.pixels[0] = top, image.pixels[1] = top, image.pixels[size_t(w)] = below, image.pixels[size_t(w) + 1] = 0.1f;
  const reference::LossAndGradient g_below = reference::loss_and_gradient(m, params, image.pixels.data(), 1, 1e-6, 1000);
  const reference::Kink* k = nullptr;
  for (const reference::Kink& e : g_below.kinks)
    if (e.layer == 1 && e.pool && e.unit == 0 && e.to == size_t(w)) k = &e;
  ASSERT_NE(k, nullptr) << "the input just below the tied pair is not among the pooling kinks";
  EXPECT_GT(g_below.exact_ties, 0u);  // the pair itself: equal, not a kink
  image.pixels[size_t(w)] = above;
  const reference::LossAndGradient g_above = reference::loss_and_gradient(m, params, image.pixels.data(), 1);
  const auto [jump, err] = jump_and_error(g_below, g_above, *k);
  ASSERT_GT(jump, 1e-9) << "no gradient reaches the window";
  EXPECT_LT(err / jump, 1e-5);
}

TEST(Validation, AKinkThatExplainsTheErrorIsCountedAsFlipped) {
  // The step took one decision the other way: its gradient is the reference's plus that kink's
  // alternative, plus rounding. Following it leaves only the rounding, and it is counted (its
  // size is the error before it, to rounding, so comparing with that error would be a coin
  // toss). A second alternative that does not fit is left out.
  const std::vector<Tensor> t = {{"w", 0, 3, {3}}};
  std::vector<double> ref = {1.0, 1.0, 1.0};
  const std::vector<double> step = {1.5, 1.0 + 1e-9, 1.0 - 1e-9};
  reference::Kink fits, misfit;
  fits.margin = 2e-8, fits.index = {0}, fits.value = {0.5};
  misfit.margin = 1e-8, misfit.index = {1}, misfit.value = {0.3};
  const KinksFollowed f = follow_kinks(t, {misfit, fits}, ref, step);
  EXPECT_EQ(f.taken, 1u);
  EXPECT_EQ(f.mattered, 1u);
  EXPECT_EQ(f.widest, 2e-8);
  EXPECT_EQ(ref[0], 1.5);
  EXPECT_EQ(ref[1], 1.0);
}

// ---------------------------------------------------------------- synthetic images

TEST(Synthetic, DeterministicInRangeAndIndependentOfTheCount) {
  const ImageSet a = synthetic_images(5, 3, 32, 32, 9), b = synthetic_images(9, 3, 32, 32, 9);
  for (size_t j = 0; j < a.pixels.size(); ++j) {
    ASSERT_EQ(a.pixels[j], b.pixels[j]);
    ASSERT_GE(a.pixels[j], 0.0f);
    ASSERT_LE(a.pixels[j], 1.0f);
  }
  EXPECT_NE(a.pixels, synthetic_images(5, 3, 32, 32, 10).pixels);
  // Shapes, not noise: neighbouring pixels are close far more often than not.
  size_t close = 0, total = 0;
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x + 1 < 32; ++x, ++total)
        close += std::fabs(a.pixels[(c * 32 + y) * 32 + x] - a.pixels[(c * 32 + y) * 32 + x + 1]) < 0.05f;
  EXPECT_GT(double(close) / total, 0.8);
}

// ---------------------------------------------------------------- CIFAR-10

// A record: label, then 1024 red, 1024 green, 1024 blue bytes.
std::vector<unsigned char> cifar_records(int count, int first_label) {
  std::vector<unsigned char> bytes;
  for (int r = 0; r < count; ++r) {
    bytes.push_back(static_cast<unsigned char>((first_label + r) % 10));
    for (int i = 0; i < 3072; ++i) bytes.push_back(static_cast<unsigned char>((i * 7 + r * 13) % 256));
  }
  return bytes;
}

TEST(Cifar10, ReadsRecordsInChwOrderScaledToOne) {
  Scratch s;
  s.write("data_batch_1.bin", cifar_records(2, 0));
  s.write("data_batch_2.bin", cifar_records(3, 5));
  const ImageSet set = read_cifar10({s.path("data_batch_1.bin"), s.path("data_batch_2.bin")});
  EXPECT_EQ(set.count, 5);
  EXPECT_EQ(set.source, "cifar-10");
  ASSERT_EQ(set.pixels.size(), 5u * 3072);
  for (int r = 0; r < 5; ++r) {
    const int within = r < 2 ? r : r - 2;  // the record's index in its own file
    for (int i : {0, 1, 1023, 1024, 2048, 3071})
      EXPECT_FLOAT_EQ(set.pixels[size_t(r) * 3072 + i], float((i * 7 + within * 13) % 256) / 255.0f) << r << " " << i;
  }
  EXPECT_EQ(read_cifar10({s.path("data_batch_1.bin"), s.path("data_batch_2.bin")}, 3).count, 3);
}

TEST(Cifar10, RefusesTruncatedEmptyAndForeignFilesByName) {
  Scratch s;
  std::vector<unsigned char> cut = cifar_records(2, 0);
  cut.resize(cut.size() - 100);
  s.write("data_batch_1.bin", cut);
  expect_usage_error([&] { read_cifar10({s.path("data_batch_1.bin")}); }, {"data_batch_1.bin", "3073", "truncated"});
  s.write("empty.bin", {});
  expect_usage_error([&] { read_cifar10({s.path("empty.bin")}); }, {"empty.bin", "empty"});
  std::vector<unsigned char> bad = cifar_records(2, 0);
  bad[3073] = 200;  // CIFAR-100 has 100 fine labels; CIFAR-10 only 10
  s.write("bad.bin", bad);
  expect_usage_error([&] { read_cifar10({s.path("bad.bin")}); }, {"bad.bin", "record 1", "label 200"});
  expect_usage_error([&] { read_cifar10({s.path("missing.bin")}); }, {"missing.bin"});
}

TEST(Cifar10, FolderNeedsEveryFileOfTheSplit) {
  Scratch s;
  for (int i = 1; i <= 4; ++i) s.write("data_batch_" + std::to_string(i) + ".bin", cifar_records(1, i));
  expect_usage_error([&] { cifar10_files(s.dir(), "train"); }, {"data_batch_5.bin", "missing"});
  s.write("data_batch_5.bin", cifar_records(1, 5));
  EXPECT_EQ(cifar10_files(s.dir(), "train").size(), 5u);
  expect_usage_error([&] { cifar10_files(s.dir(), "test"); }, {"test_batch.bin"});
  s.write("test_batch.bin", cifar_records(1, 0));
  EXPECT_EQ(read_cifar10(cifar10_files(s.dir(), "test")).count, 1);
}

// ---------------------------------------------------------------- IDX (Fashion-MNIST)

std::vector<unsigned char> idx_images(uint32_t count, uint32_t rows, uint32_t cols, uint32_t magic = 0x00000803) {
  std::vector<unsigned char> b;
  for (uint32_t v : {magic, count, rows, cols})
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(v >> s));
  for (uint32_t i = 0; i < count * rows * cols; ++i) b.push_back(static_cast<unsigned char>(i % 251));
  return b;
}

void expect_padded_fashion_images(const ImageSet& set, int count) {
  ASSERT_EQ(set.count, count);
  EXPECT_EQ(set.source, "fashion-mnist");
  EXPECT_EQ(set.channels, 3);
  EXPECT_EQ(set.height, 32);
  for (int i = 0; i < count; ++i)
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) {
          const float got = set.pixels[((size_t(i) * 3 + c) * 32 + y) * 32 + x];
          const bool inside = y >= 2 && y < 30 && x >= 2 && x < 30;
          const float want = inside ? float(((size_t(i) * 28 + y - 2) * 28 + x - 2) % 251) / 255.0f : 0.0f;
          ASSERT_FLOAT_EQ(got, want) << i << " " << c << " " << y << " " << x;
        }
}

TEST(Idx, ReadsImagesPaddedTo32AndReplicatedToThreeChannels) {
  Scratch s;
  s.write("train-images-idx3-ubyte", idx_images(3, 28, 28));
  expect_padded_fashion_images(read_idx_images(fashion_mnist_file(s.dir(), "train")), 3);
  EXPECT_EQ(read_idx_images(s.path("train-images-idx3-ubyte"), 2).count, 2);
}

TEST(Idx, RefusesWrongMagicTruncationTrailingBytesAndLargeImages) {
  Scratch s;
  s.write("labels", idx_images(3, 28, 28, 0x00000801));
  expect_usage_error([&] { read_idx_images(s.path("labels")); }, {"labels", "magic 0x00000801", "label file"});
  s.write("other", idx_images(3, 28, 28, 0x12345678));
  expect_usage_error([&] { read_idx_images(s.path("other")); }, {"other", "magic 0x12345678", "0x00000803"});
  std::vector<unsigned char> cut = idx_images(3, 28, 28);
  cut.resize(cut.size() - 1);
  s.write("cut", cut);
  expect_usage_error([&] { read_idx_images(s.path("cut")); }, {"cut", "truncated", "3 images of 28x28"});
  s.write("short", {0, 0, 8});
  expect_usage_error([&] { read_idx_images(s.path("short")); }, {"short", "truncated", "16-byte header"});
  std::vector<unsigned char> extra = idx_images(3, 28, 28);
  extra.push_back(0);
  s.write("extra", extra);
  expect_usage_error([&] { read_idx_images(s.path("extra")); }, {"extra", "1 bytes after"});
  s.write("large", idx_images(1, 40, 40));
  expect_usage_error([&] { read_idx_images(s.path("large")); }, {"large", "40x40"});
  s.write("none", idx_images(0, 28, 28));
  expect_usage_error([&] { read_idx_images(s.path("none")); }, {"none", "0 images"});
}

TEST(Idx, RefusesGzipDataUnderARawName) {
  Scratch s;
  s.write("train-images-idx3-ubyte", {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3});
  expect_usage_error([&] { read_idx_images(s.path("train-images-idx3-ubyte")); }, {"train-images-idx3-ubyte", "gzip"});
}

TEST(Idx, FolderWithoutTheFileIsNamed) {
  Scratch s;
  expect_usage_error([&] { fashion_mnist_file(s.dir(), "test"); }, {"t10k-images-idx3-ubyte", "dataset-fashion-mnist"});
  expect_usage_error([&] { fashion_mnist_file(s.path("nothing"), "train"); }, {"nothing", "not a folder"});
}

#ifdef STEPWISE_AE_HAVE_ZLIB
std::vector<unsigned char> gzip(const std::vector<unsigned char>& raw) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<unsigned char> out(deflateBound(&z, uLong(raw.size())) + 32);
  z.next_in = const_cast<unsigned char*>(raw.data());
  z.avail_in = uInt(raw.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(Idx, ReadsDebiansGzipFiles) {
  Scratch s;
  s.write("train-images-idx3-ubyte.gz", gzip(idx_images(3, 28, 28)));
  EXPECT_EQ(fashion_mnist_file(s.dir(), "train"), s.path("train-images-idx3-ubyte.gz"));
  const ImageSet packed = read_idx_images(s.path("train-images-idx3-ubyte.gz"));
  expect_padded_fashion_images(packed, 3);
  // The same images raw: the same origin (the file's name without .gz), so the same problem.
  s.write("train-images-idx3-ubyte", idx_images(3, 28, 28));
  const ImageSet raw = read_idx_images(s.path("train-images-idx3-ubyte"));
  EXPECT_EQ(packed.origin, "train-images-idx3-ubyte");
  EXPECT_EQ(raw.origin, packed.origin);
  EXPECT_EQ(raw.pixels, packed.pixels);
}

TEST(Idx, RefusesTruncatedOrForeignGzipFiles) {
  Scratch s;
  std::vector<unsigned char> packed = gzip(idx_images(3, 28, 28));
  packed.resize(packed.size() / 2);
  s.write("cut.gz", packed);
  expect_usage_error([&] { read_idx_images(s.path("cut.gz")); }, {"cut.gz", "gzip"});
  s.write("plain.gz", idx_images(1, 28, 28));
  expect_usage_error([&] { read_idx_images(s.path("plain.gz")); }, {"plain.gz", "not gzip data"});
}
#endif

// ---------------------------------------------------------------- weights

TEST(Weights, SaveAndLoadRoundTripAndRefuseWhatDoesNotFit) {
  Scratch s;
  const Model m = tiny_model();
  const std::vector<float> p = he_initialization(m, 4);
  save_parameters(s.path("w"), m, p);
  EXPECT_TRUE(fs::exists(s.path("w/conv3.weight.npy")));
  EXPECT_EQ(load_parameters(s.path("w"), m), p);
  // Another model's weights: conv1.weight has another shape.
  Model wider = m;
  wider.enc1 = 5;
  expect_usage_error([&] { load_parameters(s.path("w"), wider); }, {"conv1.weight.npy"});
  fs::remove(s.path("w/conv5.bias.npy"));
  expect_usage_error([&] { load_parameters(s.path("w"), m); }, {"conv5.bias.npy", "missing"});
  std::vector<float> bias(3, 0.0f);
  bias[1] = NAN;
  core::write_npy(s.path("w/conv5.bias.npy"), {3}, bias.data());
  expect_usage_error([&] { load_parameters(s.path("w"), m); }, {"conv5.bias.npy", "not finite"});
  expect_usage_error([&] { load_parameters(s.path("nowhere"), m); }, {"nowhere", "not a folder"});
}

// ---------------------------------------------------------------- presets and schedule

TEST(Problem, MinibatchesRunInOrderAndWrapAtTheEpoch) {
  EXPECT_EQ(minibatch_start(0, 16, 100), 0u);
  EXPECT_EQ(minibatch_start(5, 16, 100), 80u);
  EXPECT_EQ(minibatch_start(6, 16, 100), 0u);  // 6 minibatches per epoch; the last 4 images are left out
}

TEST(Problem, PresetsAreTheDocumentedOnes) {
  EXPECT_EQ(preset("small").model.describe(), "3-256-128-128-256-3 on 32x32");
  EXPECT_EQ(parameter_count(preset("large").model), 751875u);
  EXPECT_EQ(preset("large").images, 50000);
  EXPECT_EQ(preset("tiny").model.describe(), "3-16-8-8-16-3 on 16x16");
  expect_usage_error([] { preset("huge"); }, {"huge"});
}

}  // namespace
}  // namespace ae
