#include "epic/products.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"

namespace epic {

const char* product_name(Product p) {
  switch (p) {
    case Product::XX: return "XX";
    case Product::YY: return "YY";
    case Product::XY: return "XY*";
    case Product::YX: return "YX*";
    case Product::I: return "I";
  }
  return "?";
}

std::vector<Product> default_products(int pols) {
  if (pols == 1) return {Product::XX};
  return {Product::XX, Product::YY, Product::XY, Product::YX};
}

std::vector<Product> parse_products(const std::string& text, int pols) {
  std::vector<Product> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::string name;
    for (char ch : item)
      if (ch != ' ' && ch != '*') name += char(std::toupper(static_cast<unsigned char>(ch)));
    Product p;
    if (name == "XX") p = Product::XX;
    else if (name == "YY") p = Product::YY;
    else if (name == "XY") p = Product::XY;
    else if (name == "YX") p = Product::YX;
    else if (name == "I") p = Product::I;
    else throw core::UsageError("--products " + text + ": unknown product '" + item + "' (XX, YY, XY, YX, I)");
    if (std::find(out.begin(), out.end(), p) != out.end())
      throw core::UsageError("--products " + text + ": " + product_name(p) + " is named twice");
    if (needs_y(p) && pols < 2)
      throw core::UsageError(std::string("--products ") + text + ": " + product_name(p) +
                             " needs two polarizations (--pols 2)");
    out.push_back(p);
  }
  if (out.empty()) throw core::UsageError("--products: no product named");
  return out;
}

std::string products_string(const std::vector<Product>& products) {
  std::string s;
  for (Product p : products) {
    if (!s.empty()) s += ',';
    s += product_name(p);
  }
  return s;
}

int plane_count(const std::vector<Product>& products) {
  int n = 0;
  for (Product p : products) n += is_complex(p) ? 2 : 1;
  return n;
}

std::vector<std::string> plane_names(const std::vector<Product>& products) {
  std::vector<std::string> names;
  for (Product p : products) {
    if (is_complex(p)) {
      names.push_back(std::string(product_name(p)) + ".re");
      names.push_back(std::string(product_name(p)) + ".im");
    } else {
      names.push_back(product_name(p));
    }
  }
  return names;
}

}  // namespace epic
