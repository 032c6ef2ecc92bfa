// Epilogue signatures and sample epilogues (see epilogue_signature.h).
#include "ops/epilogue_signature.h"

#include <array>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace kbench::ops {
namespace {

constexpr std::array<std::pair<Activation, std::string_view>, 7> kActivationNames = {{
    {Activation::kRelu, "relu"},
    {Activation::kSilu, "silu"},
    {Activation::kGeluTanh, "gelu_tanh"},
    {Activation::kGeluErf, "gelu_erf"},
    {Activation::kTanh, "tanh"},
    {Activation::kMish, "mish"},
    {Activation::kSigmoid, "sigmoid"},
}};

constexpr std::array<std::pair<BinaryOp, std::string_view>, 4> kOpNames = {{
    {BinaryOp::kAdd, "add"},
    {BinaryOp::kSubtract, "sub"},
    {BinaryOp::kMultiply, "mul"},
    {BinaryOp::kDivide, "div"},
}};

template <class Table, class Key>
std::string_view name_in(const Table& table, Key key) {
  for (const auto& [k, name] : table)
    if (k == key) return name;
  return "none";
}

template <class Table>
auto key_in(const Table& table, std::string_view name, const std::string& signature) {
  for (const auto& [k, n] : table)
    if (n == name) return k;
  throw std::invalid_argument("epilogue signature '" + signature + "': unknown step '" +
                              std::string(name) + "'");
}

std::string post_op_name(const PostOp& op) {
  switch (op.kind) {
    case PostOp::Kind::kActivation:
      return std::string(name_in(kActivationNames, op.activation));
    case PostOp::Kind::kLinear:
      return "linear";
    case PostOp::Kind::kClip:
      return "clip";
    case PostOp::Kind::kLeakyRelu:
      return "leakyrelu";
    case PostOp::Kind::kScalar:
      return std::string(name_in(kOpNames, op.op));
    case PostOp::Kind::kColumn:
      break;
  }
  return "col." + std::string(name_in(kOpNames, op.op));
}

std::vector<std::string_view> steps_of(std::string_view signature) {
  std::vector<std::string_view> steps;
  if (signature.empty()) return steps;
  for (std::size_t start = 0;;) {  // "a++b" and "a+" hold empty steps, which nothing accepts
    const std::size_t plus = signature.find('+', start);
    steps.push_back(signature.substr(start, plus - start));
    if (plus == std::string_view::npos) return steps;
    start = plus + 1;
  }
}

bool starts_with(std::string_view text, std::string_view prefix, std::string_view* rest) {
  if (!text.starts_with(prefix)) return false;
  *rest = text.substr(prefix.size());
  return true;
}

}  // namespace

std::string epilogue_signature(const Epilogue& epilogue) {
  std::string out;
  const auto add = [&](std::string_view step) {
    if (!out.empty()) out += '+';
    out += step;
  };
  if (epilogue.alpha != 1.0f) add("scale");
  if (epilogue.bias != nullptr) add("bias");
  if (epilogue.activation != Activation::kNone)
    add("act." + std::string(name_in(kActivationNames, epilogue.activation)));
  if (epilogue.multiplier) add(epilogue.multiplier->dtype == KB_F32 ? "mul.f32" : "mul.bf16");
  for (const PostOp& op : epilogue.post_ops) add("post." + post_op_name(op));
  if (epilogue.round_to_bf16) add("round.bf16");
  return out;
}

// Owned operands: the bias, the multiplier (f32 or bf16 bits) and each column post-op's values.
struct SampleEpilogue::Operands {
  std::vector<float> bias, multiplier_f32;
  std::vector<std::uint16_t> multiplier_bf16;
  std::vector<std::vector<float>> columns;
};

SampleEpilogue::SampleEpilogue(const std::string& signature, std::int64_t m, std::int64_t n)
    : operands_(std::make_unique<Operands>()) {
  const auto columns = static_cast<std::size_t>(n), elements = static_cast<std::size_t>(m * n);
  // Every column post-op keeps its own values; reserved up front so the pointers stay valid.
  operands_->columns.reserve(steps_of(signature).size());
  for (const std::string_view step : steps_of(signature)) {
    std::string_view rest;
    if (step == "scale") {
      epilogue_.alpha = 0.5f;
    } else if (step == "bias") {
      operands_->bias.assign(columns, 0.25f);
      epilogue_.bias = operands_->bias.data();
    } else if (starts_with(step, "act.", &rest)) {
      epilogue_.activation = key_in(kActivationNames, rest, signature);
    } else if (step == "mul.f32") {
      operands_->multiplier_f32.assign(elements, 1.5f);
      epilogue_.multiplier = Matrix{operands_->multiplier_f32.data(), KB_F32, m, n, n};
    } else if (step == "mul.bf16") {
      operands_->multiplier_bf16.assign(elements, 0x3fc0);  // bf16 1.5
      epilogue_.multiplier = Matrix{operands_->multiplier_bf16.data(), KB_BF16, m, n, n};
    } else if (starts_with(step, "post.col.", &rest)) {
      const BinaryOp op = key_in(kOpNames, rest, signature);
      operands_->columns.emplace_back(columns, 1.5f);
      epilogue_.post_ops.push_back(PostOp::column(op, operands_->columns.back().data()));
    } else if (step == "round.bf16") {
      epilogue_.round_to_bf16 = true;
    } else if (step == "post.linear") {
      epilogue_.post_ops.push_back(PostOp::linear(0.5f, 0.25f));
    } else if (step == "post.clip") {
      epilogue_.post_ops.push_back(PostOp::clip(-1.0f, 1.0f));
    } else if (step == "post.leakyrelu") {
      epilogue_.post_ops.push_back(PostOp::leaky_relu(0.01f));
    } else if (starts_with(step, "post.", &rest)) {
      bool scalar = false;
      for (const auto& [op, name] : kOpNames)
        if (name == rest) {
          epilogue_.post_ops.push_back(PostOp::scalar(op, 1.5f));
          scalar = true;
        }
      if (!scalar)
        epilogue_.post_ops.push_back(PostOp::act(key_in(kActivationNames, rest, signature)));
    } else {
      throw std::invalid_argument("epilogue signature '" + signature + "': unknown step '" +
                                  std::string(step) + "'");
    }
  }
}

SampleEpilogue::~SampleEpilogue() = default;

}  // namespace kbench::ops
