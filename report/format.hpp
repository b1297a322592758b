// Number formatting for the report's tables: fixed rules, so that the same records always
// give the same text.
#pragma once
#include <optional>
#include <string>

namespace report {

std::string printf_string(const char* format, double v);
std::string fmt_ms(double ms);                 // 4 significant digits, no exponent in [1e-3, 1e7)
std::string fmt_si(double v);                  // 1.095e8 -> "109.5 M"
std::string fmt_speedup(double s);             // "1.00x", "12.3x", "1234x"
std::string fmt_percent(double fraction);      // 0.726 -> "72.6 %"
std::string fmt_sci(std::optional<double> v);  // "5.75e-07", "n/a"
std::string fmt_db(std::optional<double> v);   // "130.8", "n/a"
std::string fmt_data(double v);                // for .dat files: %.8g
std::string slug(const std::string& text);     // "NVIDIA H100 80GB" -> "nvidia-h100-80gb"
std::string date_of(const std::string& iso);   // "2026-11-21T05:44:32Z" -> "2026-11-21"

}  // namespace report
