#include "harness/eval_result.h"

#include <array>

namespace kbench {
namespace {

constexpr std::array<std::pair<Status, const char*>, 6> kStatusNames = {{
    {Status::kCorrect, "correct"},
    {Status::kIncorrect, "incorrect"},
    {Status::kCompileError, "compile_error"},
    {Status::kRuntimeError, "runtime_error"},
    {Status::kTimeout, "timeout"},
    {Status::kRejected, "rejected"},
}};

}  // namespace

const char* status_name(Status status) {
  for (const auto& [value, name] : kStatusNames) {
    if (value == status) return name;
  }
  return "unknown";
}

std::optional<Status> parse_status(std::string_view name) {
  for (const auto& [value, status_text] : kStatusNames) {
    if (name == status_text) return value;
  }
  return std::nullopt;
}

}  // namespace kbench
