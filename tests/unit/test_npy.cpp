// NPY round trips and every rejection case of the strict reader.
#include <gtest/gtest.h>

#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "core/error.hpp"
#include "core/npy.hpp"

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("stepwise_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A minimal version 1.0 file with the given header dictionary and payload.
std::string npy_file(const std::string& dict, size_t payload_bytes) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string s = "\x93NUMPY\x01";
  s += '\0';
  s += char(header.size() & 0xff);
  s += char(header.size() >> 8);
  s += header;
  s += std::string(payload_bytes, '\x01');
  return s;
}

std::string error_of(const std::string& path) {
  try {
    core::read_npy(path);
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "";
}

template <class T>
void expect_round_trip(const std::vector<T>& values, const std::vector<size_t>& shape) {
  const std::string path = temp_path("round_trip.npy");
  core::write_npy<T>(path, shape, values.data());
  std::vector<size_t> read_shape;
  EXPECT_EQ(core::read_npy_as<T>(path, shape, &read_shape), values);
  EXPECT_EQ(read_shape, shape);
  std::remove(path.c_str());
}

TEST(Npy, RoundTripsEveryDtype) {
  expect_round_trip<float>({1.5f, -2.0f, 3.25f, 0.0f, 5.0f, 6.0f}, {2, 3});
  expect_round_trip<double>({1e-300, -2.5, 3.0}, {3});
  expect_round_trip<int32_t>({-7, 0, 2147483647, 4}, {2, 2});
  expect_round_trip<uint8_t>({0, 255, 17}, {3, 1});
  expect_round_trip<std::complex<float>>({{1, 2}, {-3, 4.5f}}, {2});
}

TEST(Npy, HeaderIsWhatNumpyWrites) {
  const std::string path = temp_path("header.npy");
  const float v[3] = {1, 2, 3};
  core::write_npy<float>(path, {3}, v);
  std::ifstream in(path, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(all.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = size_t((unsigned char)all[8]) + 256 * size_t((unsigned char)all[9]);
  EXPECT_EQ((10 + header_len) % 64, 0u) << "data starts on a 64-byte boundary";
  EXPECT_EQ(all.size(), 10 + header_len + sizeof v);
  EXPECT_NE(all.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Npy, RejectsMissingFile) {
  EXPECT_NE(error_of("/nonexistent/x.npy").find("cannot open"), std::string::npos);
}

TEST(Npy, RejectsBadMagic) {
  const std::string path = temp_path("magic.npy");
  write_bytes(path, "PK\x03\x04 this is a zip file, not npy");
  EXPECT_NE(error_of(path).find("bad magic"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Npy, RejectsTruncatedData) {
  const std::string path = temp_path("truncated.npy");
  write_bytes(path, npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", 39));
  const std::string e = error_of(path);
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  EXPECT_NE(e.find(path), std::string::npos) << "the message names the file";
  std::remove(path.c_str());
}

TEST(Npy, RejectsTruncatedHeader) {
  const std::string path = temp_path("short.npy");
  write_bytes(path, std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 17));
  EXPECT_NE(error_of(path).find("truncated"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Npy, RejectsTrailingBytes) {
  const std::string path = temp_path("long.npy");
  write_bytes(path, npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12));
  EXPECT_NE(error_of(path).find("beyond the data"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Npy, RejectsUnsupportedDtype) {
  const std::string path = temp_path("dtype.npy");
  write_bytes(path, npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8));
  EXPECT_NE(error_of(path).find("unsupported dtype '>f4'"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Npy, RejectsFortranOrder) {
  const std::string path = temp_path("fortran.npy");
  write_bytes(path, npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16));
  EXPECT_NE(error_of(path).find("Fortran"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Npy, RejectsAbsurdShape) {
  const std::string path = temp_path("absurd.npy");
  write_bytes(path, npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", 8));
  EXPECT_NE(error_of(path).find("more bytes than 2^64"), std::string::npos);
  write_bytes(path, npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (99999, 99999), }", 8));
  EXPECT_NE(error_of(path).find("truncated"), std::string::npos);
  write_bytes(path, npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }", 8));
  EXPECT_NE(error_of(path).find("not a non-negative integer"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Npy, RejectsShapeWhoseByteCountOverflows) {
  // 999999999999999^3 x 8 bytes wraps even a 128-bit product: it must be refused as too large,
  // never accepted as a small wrapped size.
  const std::string path = temp_path("overflow.npy");
  write_bytes(path, npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (999999999999999, 999999999999999, 999999999999999), }", 8));
  EXPECT_NE(error_of(path).find("more bytes than 2^64"), std::string::npos) << error_of(path);
  write_bytes(path, npy_file("{'descr': '<u1', 'fortran_order': False, 'shape': (4294967296, 4294967296, 1), }", 8));
  EXPECT_NE(error_of(path).find("more bytes than 2^64"), std::string::npos) << error_of(path);
  std::remove(path.c_str());
}

TEST(Npy, RejectsFolderAndPipe) {
  const std::string dir = temp_path("folder.npy");
  std::filesystem::create_directory(dir);
  EXPECT_NE(error_of(dir).find("is a folder, not a file"), std::string::npos) << error_of(dir);
  std::filesystem::remove(dir);
  // A FIFO would block a reader that opened it: it is refused without being opened.
  const std::string fifo = temp_path("pipe.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of(fifo).find("not a regular file (a pipe)"), std::string::npos) << error_of(fifo);
  std::remove(fifo.c_str());
}

TEST(Npy, ReadAsRejectsWrongDtypeAndShape) {
  const std::string path = temp_path("typed.npy");
  const double v[4] = {1, 2, 3, 4};
  core::write_npy<double>(path, {4}, v);
  try {
    core::read_npy_as<float>(path, {4});
    FAIL() << "float64 read as float32";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong dtype: expected float32, found float64"), std::string::npos);
  }
  try {
    core::read_npy_as<double>(path, {5});
    FAIL() << "shape (4,) accepted as (5,)";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong shape: expected (5,), found (4,)"), std::string::npos);
  }
  EXPECT_EQ(core::read_npy_as<double>(path, {0}).size(), 4u) << "0 accepts any extent";
  std::remove(path.c_str());
}

}  // namespace
