// Polarization products of the image. With two polarizations X and Y, the fields F_X, F_Y of
// one sample give XX = |F_X|^2, YY = |F_Y|^2, XY* = F_X conj(F_Y), YX* = F_Y conj(F_X) and
// Stokes I = XX + YY (linear feeds). XX, YY and I are real; XY* and YX* are complex and take two
// planes of the output (real, then imaginary).
#pragma once
#include <string>
#include <vector>

namespace epic {

enum class Product { XX, YY, XY, YX, I };

const char* product_name(Product p);  // "XX", "YY", "XY*", "YX*", "I"
inline bool is_complex(Product p) { return p == Product::XY || p == Product::YX; }
inline bool needs_y(Product p) { return p != Product::XX; }

// "XX,YY,XY,YX" (the default with two polarizations), "I", "XX" ... Throws core::UsageError
// naming --products for an unknown, repeated or (with one polarization) impossible product.
std::vector<Product> parse_products(const std::string& text, int pols);
std::vector<Product> default_products(int pols);
std::string products_string(const std::vector<Product>& products);  // "XX,YY,XY,YX"

int plane_count(const std::vector<Product>& products);
// One name per plane: "XX", "XY*.re", "XY*.im", ...
std::vector<std::string> plane_names(const std::vector<Product>& products);

}  // namespace epic
