// expect: correct on 8p_GEMM
// An 8p_GEMM candidate that calls oneDNN's matmul: proves that a candidate including
// <oneapi/dnnl/dnnl.hpp> compiles and links (-ldnnl) under kbench's fixed candidate command and
// runs correctly through the real worker. It widens to f32 so that every CPU oneDNN supports runs
// it, with or without bf16 instructions. scripts/check-march.sh also compiles it for other CPUs.
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <vector>

#include "kbench/kernel.h"

namespace {

std::vector<float> widen(const kb_tensor& t) {
  const auto* bits = static_cast<const uint16_t*>(t.data);
  std::vector<float> values(static_cast<size_t>(kb_numel(&t)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = kb_bf16_to_f32(bits[i]);
  return values;
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& a = inputs[0];
  const kb_tensor& b = inputs[1];
  kb_tensor& out = outputs[0];
  if (a.rank != 2 || b.rank != 2 || a.shape[1] != b.shape[0]) return 1;
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];

  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::desc a_desc({m, k}, dt::f32, tag::ab);
  const dnnl::memory::desc b_desc({k, n}, dt::f32, tag::ab);
  const dnnl::memory::desc c_desc({m, n}, dt::f32, tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_desc, b_desc, c_desc), engine);

  std::vector<float> a32 = widen(a), b32 = widen(b), c32(static_cast<size_t>(m * n));
  dnnl::memory a_mem(a_desc, engine, a32.data()), b_mem(b_desc, engine, b32.data()),
      c_mem(c_desc, engine, c32.data());
  dnnl::matmul(pd).execute(
      stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
  stream.wait();

  auto* c = static_cast<uint16_t*>(out.data);
  for (size_t i = 0; i < c32.size(); ++i) c[i] = kb_f32_to_bf16(c32[i]);
  return 0;
}
