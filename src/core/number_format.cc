#include "core/number_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace kbench {

std::string fixed(double value, int decimals) {
  char text[384];  // %f of the largest double has 309 integer digits
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string significant(double value, int significant_digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", significant_digits, value);
  return text;
}

std::string exact(double value) {
  if (!std::isfinite(value)) return "";
  char text[64];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : std::string();
}

}  // namespace kbench
