// Numbers as text, one set of rules for every table, report, prompt and record: fixed decimals,
// significant digits, and the shortest text that reads back as the same double.
#pragma once

#include <string>

namespace kbench {

// `decimals` digits after the point (printf %.*f): "3.14". NaN and infinities as printf writes
// them.
std::string fixed(double value, int decimals);

// `significant` significant digits, exponent where shorter (printf %.*g): "0.0001234", "1.2e+09".
std::string significant(double value, int significant_digits);

// The shortest text that reads back as the same double (std::to_chars); "" for NaN or infinity.
std::string exact(double value);

}  // namespace kbench
