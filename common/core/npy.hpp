// Strict NumPy .npy reader and writer (format versions 1.0 and 2.0, C order, little-endian).
// Anything unexpected (magic, version, dtype, Fortran order, shape, truncation) is refused
// with a core::UsageError naming the file and the problem.
#pragma once
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace core {

enum class DType { f32, f64, i32, u8, c64 };

const char* dtype_name(DType t);      // "float32", ...
size_t dtype_size(DType t);

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::u8; };
template <> struct dtype_of<std::complex<float>> { static constexpr DType value = DType::c64; };

struct NpyArray {
  DType dtype = DType::f32;
  std::vector<size_t> shape;
  std::vector<unsigned char> bytes;  // exactly count() * dtype_size(dtype)
  size_t count() const;
};

NpyArray read_npy(const std::string& path);
void write_npy(const std::string& path, DType dtype, const std::vector<size_t>& shape,
               const void* data);

// Reads an array and insists on its dtype and shape. An entry 0 in `shape` accepts any
// extent in that dimension; an empty `shape` accepts any shape.
template <class T>
std::vector<T> read_npy_as(const std::string& path, const std::vector<size_t>& shape = {},
                           std::vector<size_t>* actual_shape = nullptr);

template <class T>
void write_npy(const std::string& path, const std::vector<size_t>& shape, const T* data) {
  write_npy(path, dtype_of<T>::value, shape, data);
}

std::string shape_string(const std::vector<size_t>& shape);  // "(3, 4)"

}  // namespace core
