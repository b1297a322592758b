#include "format.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace report {

std::string printf_string(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string fmt_ms(double ms) {
  if (!std::isfinite(ms)) return "n/a";
  const double a = std::fabs(ms);
  if (a == 0) return "0";
  if (a < 1e-3 || a >= 1e7) return printf_string("%.3e", ms);
  // Digits after the point so that 4 significant digits show: 0.1234, 1.234, 12.34, 1234.
  const int decimals = std::max(0, 3 - static_cast<int>(std::floor(std::log10(a))));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, ms);
  return buf;
}

std::string fmt_si(double v) {
  if (!std::isfinite(v)) return "n/a";
  static const char* const prefix[] = {"", " k", " M", " G", " T", " P", " E"};
  int p = 0;
  double a = std::fabs(v);
  while (a >= 999.95 && p < 6) {
    a /= 1000;
    v /= 1000;
    ++p;
  }
  if (a < 1 && p == 0 && a != 0) return printf_string("%.3g", v);
  return printf_string(a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3f", v) + prefix[p];
}

std::string fmt_speedup(double s) {
  if (!std::isfinite(s)) return "n/a";
  return printf_string(s < 10 ? "%.2fx" : s < 100 ? "%.1fx" : "%.0fx", s);
}

std::string fmt_percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  return printf_string("%.1f %%", 100 * fraction);
}

std::string fmt_sci(std::optional<double> v) { return v ? printf_string("%.2e", *v) : "n/a"; }

std::string fmt_db(std::optional<double> v) { return v ? printf_string("%.1f", *v) : "n/a"; }

std::string fmt_data(double v) { return std::isfinite(v) ? printf_string("%.8g", v) : "NaN"; }

std::string slug(const std::string& text) {
  std::string s;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "x" : s;
}

std::string date_of(const std::string& iso) { return iso.size() >= 10 ? iso.substr(0, 10) : iso; }

}  // namespace report
