// Size and group names, and helpers every workload shares.
#include "workloads/workload.h"

namespace kbench {

const char* size_name(Size size) {
  switch (size) {
    case Size::kSmoke:
      return "smoke";
    case Size::kCpu:
      return "cpu";
    case Size::kFull:
      return "full";
  }
  return "?";
}

std::optional<Size> parse_size(std::string_view text) {
  if (text == "smoke") return Size::kSmoke;
  if (text == "cpu") return Size::kCpu;
  if (text == "full") return Size::kFull;
  return std::nullopt;
}

const char* group_name(Group group) {
  return group == Group::kProduction ? "production" : "kernelbench_l2";
}

const char* math_class_name(MathClass math) {
  return math == MathClass::kBf16Matmul ? "bf16_matmul" : "f32_vector";
}

std::string Workload::source_model() const {
  if (kernelbench_problem == 0) return std::string(model);
  return "KernelBench Level 2 (PyTorch->JAX translation), problem " +
         std::to_string(kernelbench_problem) + std::string(name.substr(id().size()));
}

std::vector<kb_param> abi_params(const Problem& problem) {
  std::vector<kb_param> params;
  params.reserve(problem.params.size());
  for (const NamedParam& p : problem.params) params.push_back({p.name.c_str(), p.value});
  return params;
}

double tensor_bytes(const Problem& problem) {
  double bytes = 0;
  for (const InputSpec& in : problem.inputs) bytes += static_cast<double>(in.tensor.bytes());
  for (const TensorSpec& out : problem.outputs) bytes += static_cast<double>(out.bytes());
  return bytes;
}

}  // namespace kbench
