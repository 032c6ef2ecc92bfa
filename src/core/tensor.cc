// Tensor specs, views and aligned host buffers.
#include "core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/bf16.h"

namespace kbench {

std::size_t dtype_size(kb_dtype dtype) {
  switch (dtype) {
    case KB_BF16:
      return 2;
    case KB_F32:
    case KB_I32:
      return 4;
  }
  throw std::invalid_argument("unknown dtype");
}

const char* dtype_name(kb_dtype dtype) {
  switch (dtype) {
    case KB_BF16:
      return "bf16";
    case KB_F32:
      return "f32";
    case KB_I32:
      return "i32";
  }
  return "?";
}

std::int64_t TensorSpec::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string TensorSpec::shape_string() const {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

kb_tensor make_view(const TensorSpec& spec, void* data) {
  if (spec.shape.size() > 8) throw std::invalid_argument("tensor rank above 8: " + spec.name);
  kb_tensor t{};
  t.data = data;
  t.dtype = spec.dtype;
  t.rank = static_cast<std::int32_t>(spec.shape.size());
  for (std::size_t i = 0; i < spec.shape.size(); ++i) t.shape[i] = spec.shape[i];
  return t;
}

void HostTensor::FreeDeleter::operator()(void* p) const {
  std::free(p);
}

HostTensor::HostTensor(TensorSpec spec) : spec_(std::move(spec)) {
  const std::size_t bytes = align64(spec_.bytes() == 0 ? 1 : spec_.bytes());
  void* p = std::aligned_alloc(64, bytes);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  data_.reset(p);
}

std::vector<float> to_f32(const kb_tensor& t) {
  std::vector<float> out;
  to_f32(t, out);
  return out;
}

void widen_to_f32(const kb_tensor& t, float* out) {
  const auto n = static_cast<std::size_t>(kb_numel(&t));
  switch (t.dtype) {
    case KB_BF16:
      convert_bf16_to_f32(static_cast<const bf16_t*>(t.data), out, n);
      break;
    case KB_F32:
      std::memcpy(out, t.data, n * sizeof(float));
      break;
    case KB_I32:
      for (std::size_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(static_cast<const int32_t*>(t.data)[i]);
      break;
  }
}

void to_f32(const kb_tensor& t, std::vector<float>& out) {
  out.resize(static_cast<std::size_t>(kb_numel(&t)));
  widen_to_f32(t, out.data());
}

std::vector<std::vector<float>> to_f32(std::vector<HostTensor>& tensors) {
  std::vector<std::vector<float>> out;
  for (HostTensor& t : tensors) out.push_back(to_f32(t.view()));
  return out;
}

std::vector<kb_tensor> views_of(std::vector<HostTensor>& tensors) {
  std::vector<kb_tensor> views;
  views.reserve(tensors.size());
  for (HostTensor& t : tensors) views.push_back(t.view());
  return views;
}

}  // namespace kbench
