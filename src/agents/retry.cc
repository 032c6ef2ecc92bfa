// The retry policy's arithmetic (src/agents/retry.h).
#include "agents/retry.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kbench::agents {

bool is_retryable_status(int status) {
  return status == 429 || (status >= 500 && status <= 599);
}

std::optional<double> parse_retry_after(const std::string& value) {
  const auto first = value.find_first_not_of(" \t");
  if (first == std::string::npos) return std::nullopt;
  const auto last = value.find_last_not_of(" \t");
  const char* begin = value.data() + first;
  const char* end = value.data() + last + 1;
  double seconds = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, seconds);
  if (ec != std::errc() || ptr != end || !std::isfinite(seconds) || seconds < 0) {
    return std::nullopt;
  }
  return seconds;
}

double backoff_delay_s(int retry, const BackoffPolicy& policy, double jitter,
                       std::optional<double> retry_after_s) {
  const double cap = std::max(0.0, policy.max_s);
  if (retry_after_s) return std::clamp(*retry_after_s, 0.0, cap);
  // 2^62 already exceeds any sane cap; the clamp keeps ldexp finite for absurd retry counts.
  const double base =
      std::min(cap, std::ldexp(std::max(0.0, policy.initial_s), std::clamp(retry, 0, 62)));
  return base * (1.0 - 0.5 * std::clamp(jitter, 0.0, 1.0));
}

}  // namespace kbench::agents
