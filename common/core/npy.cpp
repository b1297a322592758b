#include "core/npy.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"

namespace core {
namespace {

struct DTypeDesc {
  DType type;
  const char* descr;  // as NumPy writes it
  const char* name;
  size_t size;
};
constexpr DTypeDesc kTypes[] = {
    {DType::f32, "<f4", "float32", 4}, {DType::f64, "<f8", "float64", 8},
    {DType::i32, "<i4", "int32", 4},   {DType::u8, "|u1", "uint8", 1},
    {DType::c64, "<c8", "complex64", 8},
};

const DTypeDesc& desc(DType t) {
  for (const auto& d : kTypes)
    if (d.type == t) return d;
  throw std::logic_error("unknown dtype");
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw UsageError(path + ": " + why);
}

// Extracts the value of 'key' from the header dictionary as raw text.
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const std::string quoted = "'" + key + "'";
  size_t at = header.find(quoted);
  if (at == std::string::npos) refuse(path, "header has no '" + key + "' entry");
  at = header.find(':', at + quoted.size());
  if (at == std::string::npos) refuse(path, "malformed header near '" + key + "'");
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  size_t end = at;
  if (header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos) refuse(path, "malformed shape in header");
    return header.substr(at, end - at + 1);
  }
  if (header[at] == '\'') {
    end = header.find('\'', at + 1);
    if (end == std::string::npos) refuse(path, "malformed descr in header");
    return header.substr(at + 1, end - at - 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(at, end - at);
}

std::vector<size_t> parse_shape(const std::string& text, const std::string& path) {
  std::vector<size_t> shape;
  std::string inner = text.substr(1, text.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos) continue;  // trailing comma of a 1-tuple
    item = item.substr(b, item.find_last_not_of(' ') - b + 1);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      refuse(path, "shape entry '" + item + "' is not a non-negative integer");
    if (item.size() > 15) refuse(path, "shape entry " + item + " is absurdly large");
    shape.push_back(std::stoull(item));
  }
  return shape;
}

}  // namespace

const char* dtype_name(DType t) { return desc(t).name; }
size_t dtype_size(DType t) { return desc(t).size; }

size_t NpyArray::count() const {
  size_t n = 1;
  for (size_t s : shape) n *= s;
  return n;
}

std::string shape_string(const std::vector<size_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in = open_input_file(path);
  char magic[8];
  if (!in.read(magic, 8)) refuse(path, "truncated: shorter than the 8-byte .npy preamble");
  if (std::memcmp(magic, "\x93NUMPY", 6) != 0) refuse(path, "not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(magic[6]);
  size_t header_len = 0;
  if (major == 1) {
    unsigned char l[2];
    if (!in.read(reinterpret_cast<char*>(l), 2)) refuse(path, "truncated header length");
    header_len = l[0] | (l[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char l[4];
    if (!in.read(reinterpret_cast<char*>(l), 4)) refuse(path, "truncated header length");
    header_len = l[0] | (l[1] << 8) | (size_t(l[2]) << 16) | (size_t(l[3]) << 24);
  } else {
    refuse(path, "unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > (1u << 20)) refuse(path, "header length is absurd");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) refuse(path, "truncated header");

  NpyArray a;
  const std::string descr = dict_value(header, "descr", path);
  bool known = false;
  for (const auto& d : kTypes)
    if (descr == d.descr || (d.size == 1 && (descr == "<u1" || descr == "u1"))) {
      a.dtype = d.type;
      known = true;
    }
  if (!known) refuse(path, "unsupported dtype '" + descr + "' (supported: <f4 <f8 <i4 |u1 <c8)");
  if (dict_value(header, "fortran_order", path) != "True" &&
      dict_value(header, "fortran_order", path) != "False")
    refuse(path, "malformed fortran_order");
  if (dict_value(header, "fortran_order", path) == "True")
    refuse(path, "Fortran-ordered arrays are not supported; save with C order");
  a.shape = parse_shape(dict_value(header, "shape", path), path);

  // Guard the multiplication and the allocation against absurd shapes: every partial product
  // stays below 2^64 (each factor is below 10^15, so the 128-bit product cannot wrap first).
  unsigned __int128 total = dtype_size(a.dtype);
  for (size_t s : a.shape) {
    total *= s;
    if (total >> 64)
      refuse(path, "shape " + shape_string(a.shape) + " of " + dtype_name(a.dtype) + " is more bytes than 2^64");
  }
  const std::streampos data_start = in.tellg();
  in.seekg(0, std::ios::end);
  const unsigned __int128 available = static_cast<unsigned long long>(in.tellg() - data_start);
  if (total > available)
    refuse(path, "truncated: shape " + shape_string(a.shape) + " of " + dtype_name(a.dtype) +
                     " needs " + std::to_string(static_cast<unsigned long long>(total)) +
                     " bytes of data, file has " +
                     std::to_string(static_cast<unsigned long long>(available)));
  if (total < available)
    refuse(path, "file has " + std::to_string(static_cast<unsigned long long>(available - total)) +
                     " bytes beyond the data its header describes");
  in.seekg(data_start);
  a.bytes.resize(static_cast<size_t>(total));
  if (total && !in.read(reinterpret_cast<char*>(a.bytes.data()), a.bytes.size()))
    refuse(path, "read error");
  return a;
}

void write_npy(const std::string& path, DType dtype, const std::vector<size_t>& shape,
               const void* data) {
  std::string header = std::string("{'descr': '") + desc(dtype).descr +
                       "', 'fortran_order': False, 'shape': " + shape_string(shape) + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary, ending in '\n'.
  const size_t preamble = 10;
  const size_t total = ((preamble + header.size() + 1 + 63) / 64) * 64;
  header.append(total - preamble - header.size() - 1, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UsageError(path + ": cannot open for writing");
  out.write("\x93NUMPY\x01\x00", 8);
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(len), 2);
  out.write(header.data(), header.size());
  size_t n = dtype_size(dtype);
  for (size_t s : shape) n *= s;
  out.write(static_cast<const char*>(data), n);
  if (!out) throw RuntimeError(path + ": write failed");
}

template <class T>
std::vector<T> read_npy_as(const std::string& path, const std::vector<size_t>& shape,
                           std::vector<size_t>* actual_shape) {
  NpyArray a = read_npy(path);
  const DType want = dtype_of<T>::value;
  if (a.dtype != want)
    refuse(path, std::string("wrong dtype: expected ") + dtype_name(want) + ", found " +
                     dtype_name(a.dtype));
  bool ok = shape.empty() || shape.size() == a.shape.size();
  for (size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] == 0 || shape[i] == a.shape[i];
  if (!ok) {
    std::string expect = "(";
    for (size_t i = 0; i < shape.size(); ++i)
      expect += (i ? ", " : "") + (shape[i] ? std::to_string(shape[i]) : std::string("any"));
    refuse(path, "wrong shape: expected " + expect + (shape.size() == 1 ? ",)" : ")") +
                     ", found " + shape_string(a.shape));
  }
  if (actual_shape) *actual_shape = a.shape;
  std::vector<T> v(a.count());
  if (!v.empty()) std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  return v;
}

template std::vector<float> read_npy_as(const std::string&, const std::vector<size_t>&, std::vector<size_t>*);
template std::vector<double> read_npy_as(const std::string&, const std::vector<size_t>&, std::vector<size_t>*);
template std::vector<int32_t> read_npy_as(const std::string&, const std::vector<size_t>&, std::vector<size_t>*);
template std::vector<uint8_t> read_npy_as(const std::string&, const std::vector<size_t>&, std::vector<size_t>*);
template std::vector<std::complex<float>> read_npy_as(const std::string&, const std::vector<size_t>&, std::vector<size_t>*);

}  // namespace core
