// When a failed LLM request is worth another try, and how long to wait first: pure functions, so
// the schedule is tested without sleeping.
#pragma once

#include <optional>
#include <string>

namespace kbench::agents {

// 429 (rate limited) and the 5xx family (500, 502, 503, 504, Anthropic's 529 "overloaded"):
// the server may answer differently later. 4xx other than 429 will not change by asking again.
bool is_retryable_status(int status);

// A Retry-After header's delay in seconds; nullopt for an absent, negative or HTTP-date value (the
// date form is left to the exponential schedule rather than trusting two clocks to agree).
std::optional<double> parse_retry_after(const std::string& value);

struct BackoffPolicy {
  double initial_s = 1;
  double max_s = 60;
};

// The wait before retry number `retry` (0 for the first retry): initial_s * 2^retry capped at
// max_s, then scaled into (1/2, 1] of that by `jitter` in [0, 1) so that clients throttled
// together do not come back together. A server's Retry-After replaces the schedule (no jitter:
// it named the moment), still capped at max_s so a hostile or confused server cannot park a run.
double backoff_delay_s(int retry, const BackoffPolicy& policy, double jitter,
                       std::optional<double> retry_after_s = std::nullopt);

}  // namespace kbench::agents
