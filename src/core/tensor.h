// Tensor descriptions (name, dtype, shape) and a 64-byte-aligned owning buffer, the host-side
// counterpart of the ABI's kb_tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kbench/kernel.h"

namespace kbench {

std::size_t dtype_size(kb_dtype dtype);
const char* dtype_name(kb_dtype dtype);

struct TensorSpec {
  std::string name;
  kb_dtype dtype = KB_BF16;
  std::vector<std::int64_t> shape;  // empty: a scalar

  std::int64_t numel() const;
  std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
  std::string shape_string() const;  // "(8,4096)" or "()"
  bool operator==(const TensorSpec&) const = default;
};

// The ABI view of `spec` over `data`.
kb_tensor make_view(const TensorSpec& spec, void* data);

class HostTensor;
// The ABI views of `tensors`, in order (valid while they live).
std::vector<kb_tensor> views_of(std::vector<HostTensor>& tensors);

// Rounds up to the ABI's 64-byte alignment.
constexpr std::size_t align64(std::size_t n) {
  return (n + 63) & ~std::size_t{63};
}

// An owning, 64-byte-aligned tensor in ordinary memory (references, oracles, tests).
class HostTensor {
 public:
  HostTensor() = default;
  explicit HostTensor(TensorSpec spec);

  const TensorSpec& spec() const { return spec_; }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <typename T>
  T* as() {
    return static_cast<T*>(data());
  }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data());
  }
  kb_tensor view() { return make_view(spec_, data()); }

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  TensorSpec spec_;
  std::unique_ptr<void, FreeDeleter> data_;
};

// Writes the kb_numel(&t) values of `t` as f32 to `out`: bf16 widened exactly, i32 converted. The
// one conversion behind to_f32 and the baselines' scratch loads, so both read a tensor alike.
void widen_to_f32(const kb_tensor& t, float* out);

// Values of a tensor as f32 (bf16 widened exactly, i32 converted), for comparisons and exports.
std::vector<float> to_f32(const kb_tensor& t);
// The same into `out`, reusing its capacity: hot loops convert outputs of equal size every call,
// and fresh vectors would page-fault hundreds of MB each time.
void to_f32(const kb_tensor& t, std::vector<float>& out);
// The same for each tensor of a call's outputs, the form the correctness check takes.
std::vector<std::vector<float>> to_f32(std::vector<HostTensor>& tensors);
// The same for outputs used only for their values (a trusted run's).
inline std::vector<std::vector<float>> to_f32(std::vector<HostTensor>&& tensors) {
  return to_f32(tensors);
}

}  // namespace kbench
