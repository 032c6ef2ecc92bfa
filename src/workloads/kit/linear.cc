// The emulations go through ops::gemm with a bf16 or f32 result, so they run fast at cpu size.
#include "workloads/kit/linear.h"

#include <iterator>
#include <utility>

#include "ops/buffers.h"
#include "ops/tensor_checks.h"
#include "workloads/kit/matmul.h"

namespace kbench::linear {
namespace {

template <class T>
Vectors<T> vectors_of(const kb_tensor* in, std::int32_t num_inputs) {
  Vectors<T> v;
  for (std::int32_t i = 2; i < num_inputs; ++i) {
    const auto* data = static_cast<const bf16_t*>(in[i].data);
    std::vector<T>& values = v.emplace_back(static_cast<std::size_t>(in[i].shape[0]));
    for (std::size_t j = 0; j < values.size(); ++j) values[j] = bf16_to_f32(data[j]);
  }
  return v;
}

bool is_output(const kb_tensor& out, Out extents, const Shape& shape) {
  switch (extents) {
    case Out::kMN:
      return ops::is_float_output(out, {shape.m, shape.n});
    case Out::kM1:
      return ops::is_float_output(out, {shape.m, 1});
    case Out::kM:
      break;
  }
  return ops::is_float_output(out, {shape.m});
}

}  // namespace

std::optional<Shape> Call::shape_of(const kb_tensor* in, std::int32_t num_inputs,
                                    const kb_tensor* out, std::int32_t num_outputs) const {
  if (num_inputs != 2 + static_cast<std::int32_t>(vectors.size()) || num_outputs != 1)
    return std::nullopt;
  const std::optional<Shape> shape = linear::shape_of(in[0], in[1], layout, nullptr);
  if (!shape || !is_output(out[0], output, *shape)) return std::nullopt;
  const kb_tensor* vector = in + 2;
  for (const Extent extent : vectors)
    if (!ops::matches(*vector++, KB_BF16, {extent == Extent::kColumns ? shape->n : 1}))
      return std::nullopt;
  return shape;
}

std::optional<Shape> shape_of(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                              const kb_tensor* bias) {
  if (x.rank != 2 || weight.rank != 2) return std::nullopt;
  const bool in_out = layout == WeightLayout::kInOut;
  const Shape shape{x.shape[0], x.shape[1], in_out ? weight.shape[1] : weight.shape[0]};
  const bool ok = ops::matches(x, KB_BF16, {shape.m, shape.k}) &&
                  (in_out ? ops::matches(weight, KB_BF16, {shape.k, shape.n})
                          : ops::matches(weight, KB_BF16, {shape.n, shape.k})) &&
                  (bias == nullptr || ops::matches(*bias, KB_BF16, {shape.n}));
  if (!ok) return std::nullopt;
  return shape;
}

std::vector<ConfigEntry> layer_config(const Shape& shape, std::vector<ConfigEntry> extras,
                                      ConfigKeys keys) {
  std::vector<ConfigEntry> config = {
      {"batch_size", shape.m}, {keys.in, shape.k}, {keys.out, shape.n}};
  config.insert(config.end(), std::make_move_iterator(extras.begin()),
                std::make_move_iterator(extras.end()));
  return config;
}

std::vector<InputSpec> layer_inputs(const Shape& shape, WeightLayout layout, const Inits& inits,
                                    std::vector<InputSpec> extras) {
  const auto [m, k, n] = shape;
  std::vector<InputSpec> inputs = {
      {{"x", KB_BF16, {m, k}}, inits.x},
      {{"weight", KB_BF16, layout == WeightLayout::kInOut ? std::vector{k, n} : std::vector{n, k}},
       inits.weight},
  };
  if (inits.bias != nullptr) inputs.push_back({{inits.bias, KB_BF16, {n}}, inits.bias_init});
  inputs.insert(inputs.end(), std::make_move_iterator(extras.begin()),
                std::make_move_iterator(extras.end()));
  return inputs;
}

Problem problem(const Shape& shape, std::vector<ConfigEntry> config, std::vector<InputSpec> inputs,
                std::vector<std::int64_t> out_shape) {
  Problem problem;
  problem.config = std::move(config);
  problem.inputs = std::move(inputs);
  problem.outputs = {{"out", KB_BF16, std::move(out_shape)}};
  problem.flops = gemm_flops(shape.m, shape.k, shape.n);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

Problem bias_layer_problem(const Shape& shape, std::vector<ConfigEntry> extras, ConfigKeys keys,
                           const Inits& inits) {
  return problem(shape, layer_config(shape, std::move(extras), keys),
                 layer_inputs(shape, kBiasCall.layout, inits), {shape.m, shape.n});
}

std::vector<double> reference(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                              const kb_tensor* bias) {
  const std::int64_t m = x.shape[0], k = x.shape[1];
  const bool in_out = layout == WeightLayout::kInOut;
  const std::int64_t n = in_out ? weight.shape[1] : weight.shape[0];
  const auto* xs = static_cast<const bf16_t*>(x.data);
  const auto* ws = static_cast<const bf16_t*>(weight.data);
  std::vector<double> y(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    double* y_row = y.data() + i * n;
    if (bias != nullptr)
      for (std::int64_t j = 0; j < n; ++j)
        y_row[j] = bf16_to_f32(static_cast<const bf16_t*>(bias->data)[j]);
    if (in_out) {
      matmul::add_product_row(xs + i * k, ws, k, n, y_row);
    } else {
      for (std::int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::int64_t p = 0; p < k; ++p)
          dot += static_cast<double>(bf16_to_f32(xs[i * k + p])) * bf16_to_f32(ws[j * k + p]);
        y_row[j] += dot;
      }
    }
  }
  return y;
}

std::vector<float> bf16_program(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                                const kb_tensor* bias, bool round_product) {
  const ops::Matrix a = ops::matrix_of(x);
  const ops::Matrix b = ops::matrix_of(weight);
  const bool transposed = layout == WeightLayout::kOutIn;
  const std::int64_t m = a.rows, n = transposed ? b.rows : b.cols;
  std::vector<float> y(static_cast<std::size_t>(m * n));
  if (round_product) {
    ops::ScratchMatrix product(KB_BF16, m, n);
    ops::gemm(a, b, transposed, product.out());
    convert_bf16_to_f32(static_cast<const bf16_t*>(product.in().data), y.data(), y.size());
  } else {
    ops::gemm(a, b, transposed, {y.data(), KB_F32, m, n, n});
  }
  if (bias != nullptr) {
    const auto* bs = static_cast<const bf16_t*>(bias->data);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float& v = y[static_cast<std::size_t>(i * n + j)];
        v = v + bf16_to_f32(bs[j]);
        if (round_product) v = round_to_bf16(v);
      }
  }
  return y;
}

void gemm(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout, const kb_tensor* bias,
          const ops::MutableMatrix& c, ops::Epilogue epilogue) {
  // Declared out here: the epilogue points into it until the GEMM returns.
  std::optional<ops::F32Buffer> bias_f32;
  if (bias != nullptr) epilogue.bias = bias_f32.emplace(ops::load_f32(*bias)).data();
  ops::gemm(ops::matrix_of(x), ops::matrix_of(weight), layout == WeightLayout::kOutIn, c, epilogue);
}

ops::ScratchMatrix f32_gemm(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                            const kb_tensor* bias, ops::Epilogue epilogue) {
  const std::int64_t n = layout == WeightLayout::kInOut ? weight.shape[1] : weight.shape[0];
  ops::ScratchMatrix y(KB_F32, x.shape[0], n);
  gemm(x, weight, layout, bias, y.out(), std::move(epilogue));
  return y;
}

void store(kb_tensor& t, std::int64_t i, float v) {
  if (t.dtype == KB_BF16)
    static_cast<bf16_t*>(t.data)[i] = f32_to_bf16(v);
  else
    static_cast<float*>(t.data)[i] = v;
}

int epilogue_reference(const Call& call, ReferenceEpilogue epilogue, const kb_tensor* in,
                       std::int32_t num_inputs, kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> shape = call.shape_of(in, num_inputs, out, num_outputs);
  if (!shape || out[0].dtype != KB_F32) return 1;
  const auto [m, k, n] = *shape;
  const std::vector<double> y = reference(in[0], in[1], call.layout, nullptr);
  const Vectors<double> v = vectors_of<double>(in, num_inputs);
  auto* result = static_cast<float*>(out[0].data);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      result[i * n + j] = static_cast<float>(epilogue(y[i * n + j], j, v));
  return 0;
}

int epilogue_program(const Call& call, ProgramEpilogue program_ops, const kb_tensor* in,
                     std::int32_t num_inputs, kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> shape = call.shape_of(in, num_inputs, out, num_outputs);
  if (!shape) return 1;
  const auto [m, k, n] = *shape;
  const std::vector<float> y = bf16_program(in[0], in[1], call.layout, nullptr);
  const Vectors<float> v = vectors_of<float>(in, num_inputs);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      store(out[0], i * n + j, program_ops(y[static_cast<std::size_t>(i * n + j)], j, v));
  return 0;
}

int fused_baseline(const Call& call, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
                   std::int32_t num_outputs, ops::Epilogue epilogue) {
  if (!call.shape_of(in, num_inputs, out, num_outputs)) return 1;
  gemm(in[0], in[1], call.layout, &in[2], ops::mutable_matrix_of(out[0]), std::move(epilogue));
  return 0;
}

}  // namespace kbench::linear
