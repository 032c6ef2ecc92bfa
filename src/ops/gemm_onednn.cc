// The oneDNN paths: one matmul primitive per (shape, layout, dtypes, epilogue), created once per
// process and reused, with the epilogue as post-ops so oneDNN applies it to each output tile before
// the single store. Operands stay in their plain row-major layout: oneDNN packs them inside the
// call as any library call from a framework would.
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm_paths.h"
#include "ops/onednn_cache.h"
#include "ops/onednn_implementations.h"
#include "ops/rows.h"

namespace kbench::ops::detail {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dt dnnl_type(kb_dtype dtype) {
  return dtype == KB_BF16 ? dt::bf16 : dt::f32;
}

dnnl::memory::desc row_major(std::int64_t rows, std::int64_t cols, std::int64_t ld, dt type) {
  return dnnl::memory::desc({rows, cols}, type, dnnl::memory::dims{ld, 1});
}

// A matmul and the scratchpad it needs. The scratchpad is the caller's, one per call: oneDNN's own
// is shared by every primitive of the process (Debian's build has DNNL_ENABLE_CONCURRENT_EXEC
// off), so two calls running at once on threads of spread_library_calls corrupted each other's
// packed operands (6p's baseline on the f32 path, seen in baseline_paths_test).
struct Primitive {
  dnnl::matmul matmul;
  dnnl::memory::desc scratchpad;
};

using Context = PrimitiveCache<Primitive>;

Context& context() {
  static Context c;
  return c;
}

dnnl::algorithm eltwise_of(Activation activation) {
  switch (activation) {
    case Activation::kRelu:
      return dnnl::algorithm::eltwise_relu;
    case Activation::kSilu:
      return dnnl::algorithm::eltwise_swish;  // x * sigmoid(alpha x) with alpha = 1
    case Activation::kGeluTanh:
      return dnnl::algorithm::eltwise_gelu_tanh;
    case Activation::kGeluErf:
      return dnnl::algorithm::eltwise_gelu_erf;
    case Activation::kTanh:
      return dnnl::algorithm::eltwise_tanh;
    case Activation::kMish:
      return dnnl::algorithm::eltwise_mish;
    case Activation::kSigmoid:
      return dnnl::algorithm::eltwise_logistic;
    case Activation::kNone:
      break;
  }
  return dnnl::algorithm::undef;
}

dnnl::algorithm binary_of(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return dnnl::algorithm::binary_add;
    case BinaryOp::kSubtract:
      return dnnl::algorithm::binary_sub;
    case BinaryOp::kMultiply:
      return dnnl::algorithm::binary_mul;
    case BinaryOp::kDivide:
      break;
  }
  return dnnl::algorithm::binary_div;
}

// A binary post-op's second operand: where it sits in the chain, its layout and its data.
struct BinaryOperand {
  int index;
  dnnl::memory::desc desc;
  const void* data;
};

// The epilogue as oneDNN post-ops in Epilogue's order (scale, bias, activation, multiplier, then
// the post-op chain), with the operands of its binary post-ops. Scalar operations are binary
// post-ops on a 1x1 operand, each exactly its one f32 operation (a divide stays a divide: y *
// (1/v) is not y / v).
//
// oneDNN 2.6's brgemm matmul gives every eltwise post-op of one algorithm the alpha and beta of the
// first (two clips with different bounds both clip to the first's), so a chain may use each
// algorithm with one pair only: a second, different eltwise_linear is split into a scalar multiply
// and add, and any other such repeat marks the chain unsupported (the GEMM then takes the OpenBLAS
// path, which has no such limit).
struct Chain {
  dnnl::post_ops post_ops;
  std::vector<BinaryOperand> operands;
  bool supported = true;
};

Chain chain_of(const Epilogue& epilogue, std::int64_t cols, const dnnl::memory::desc& multiplier) {
  Chain chain;
  dnnl::post_ops& p = chain.post_ops;
  const dnnl::memory::desc column({1, cols}, dt::f32, tag::ab);
  const dnnl::memory::desc scalar({1, 1}, dt::f32, tag::ab);
  auto binary = [&](dnnl::algorithm algorithm, const dnnl::memory::desc& desc, const void* data) {
    chain.operands.push_back({p.len(), desc, data});
    p.append_binary(algorithm, desc);
  };
  std::vector<std::tuple<dnnl::algorithm, float, float>> eltwise_params;
  // False (appending nothing) when `algorithm` is already in the chain with other parameters.
  auto eltwise = [&](dnnl::algorithm algorithm, float alpha, float beta) {
    for (const auto& [seen, seen_alpha, seen_beta] : eltwise_params)
      if (seen == algorithm) {
        if (seen_alpha != alpha || seen_beta != beta) return false;
        p.append_eltwise(1.0f, algorithm, alpha, beta);
        return true;
      }
    eltwise_params.emplace_back(algorithm, alpha, beta);
    p.append_eltwise(1.0f, algorithm, alpha, beta);
    return true;
  };
  auto activation = [&](Activation a) {
    if (a == Activation::kNone) return;
    if (!eltwise(eltwise_of(a), a == Activation::kSilu ? 1.0f : 0.0f, 0.0f))
      chain.supported = false;
  };
  if (epilogue.alpha != 1.0f) eltwise(dnnl::algorithm::eltwise_linear, epilogue.alpha, 0.0f);
  if (epilogue.bias) binary(dnnl::algorithm::binary_add, column, epilogue.bias);
  activation(epilogue.activation);
  if (epilogue.multiplier)
    binary(dnnl::algorithm::binary_mul, multiplier, epilogue.multiplier->data);
  for (const PostOp& op : epilogue.post_ops) {
    switch (op.kind) {
      case PostOp::Kind::kActivation:
        activation(op.activation);
        break;
      case PostOp::Kind::kLinear:
        if (!eltwise(dnnl::algorithm::eltwise_linear, op.alpha, op.beta)) {
          binary(dnnl::algorithm::binary_mul, scalar, &op.alpha);
          binary(dnnl::algorithm::binary_add, scalar, &op.beta);
        }
        break;
      case PostOp::Kind::kClip:
        chain.supported &= eltwise(dnnl::algorithm::eltwise_clip, op.alpha, op.beta);
        break;
      case PostOp::Kind::kLeakyRelu:
        chain.supported &= eltwise(dnnl::algorithm::eltwise_relu, op.alpha, 0.0f);
        break;
      case PostOp::Kind::kScalar:
        binary(binary_of(op.op), scalar, &op.alpha);
        break;
      case PostOp::Kind::kColumn:
        binary(binary_of(op.op), column, op.values);
        break;
    }
  }
  return chain;
}

struct Descs {
  dnnl::memory::desc a, b, c, multiplier;
};

std::string primitive_key(dt operand_type, const Matrix& a, const Matrix& b, bool b_transposed,
                          const MutableMatrix& c, const Epilogue& e) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on chained string concatenation.
  std::string key;
  auto add = [&key](double v) {
    key += std::to_string(v);
    key += ',';
  };
  for (const std::int64_t v : {a.rows, a.cols, a.ld, b.rows, b.cols, b.ld, c.ld})
    add(static_cast<double>(v));
  add(static_cast<int>(operand_type));
  // The stored dtypes: a bf16 operand widened for an f32 GEMM is read with ld = cols, an f32 one
  // with its own ld, so the same extents and ld make different primitives.
  add(a.dtype);
  add(b.dtype);
  add(b_transposed);
  // oneDNN sizes a primitive's work split for the threads it may use when it is made: one made for
  // the whole budget and run on one thread of spread_library_calls would split for threads it
  // does not have.
  add(omp_get_max_threads());
  add(c.dtype);
  add(e.alpha);
  add(e.bias != nullptr);
  add(static_cast<int>(e.activation));
  add(e.multiplier ? e.multiplier->dtype : -1);
  add(e.multiplier ? static_cast<double>(e.multiplier->ld) : -1.0);
  for (const PostOp& op : e.post_ops) {
    add(static_cast<int>(op.kind));
    add(static_cast<int>(op.activation));
    add(static_cast<int>(op.op));
    // A scalar operand is read at run time; every other parameter is in the primitive.
    add(op.kind == PostOp::Kind::kScalar ? 0.0 : op.alpha);
    add(op.beta);
  }
  return key;
}

// The operand as oneDNN should read it: as it is, or widened to dense f32 into `scratch`.
const void* operand_data(const Matrix& m, dt type, F32Buffer& scratch, std::int64_t& ld) {
  if (type == dt::bf16 || m.dtype == KB_F32) {
    ld = m.ld;
    return m.data;
  }
  scratch = widen(m);
  ld = m.cols;
  return scratch.data();
}

// The cached primitive for `key`, created on first use; nullopt when oneDNN has no implementation
// for this CPU and configuration but a reference one (remembered, so it is asked once).
std::optional<Primitive> find_or_make(Context& ctx, const std::string& key, const Descs& d,
                                      const Chain& chain) {
  return ctx.find_or_make(key, [&] {
    std::optional<Primitive> made;
    try {
      dnnl::primitive_attr attr;
      attr.set_post_ops(chain.post_ops);
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(d.a, d.b, d.c), attr, ctx.engine);
      // A reference kernel counts as no implementation: the OpenBLAS path runs the call instead.
      if (!is_reference_implementation(pd.impl_info_str())) {
        made = Primitive{dnnl::matmul(pd), pd.scratchpad_desc()};
        note_onednn_implementation(pd.impl_info_str());
      }
    } catch (const dnnl::error&) {
      // No implementation: the caller tries another form or path.
    }
    return made;
  });
}

}  // namespace

bool onednn_gemm(bool bf16, const Matrix& a, const Matrix& b, bool b_transposed,
                 const MutableMatrix& c, const Epilogue& epilogue) {
  const dt operand_type = bf16 ? dt::bf16 : dt::f32;
  F32Buffer a_scratch(0), b_scratch(0);
  std::int64_t lda = 0, ldb = 0;
  const void* a_data = operand_data(a, operand_type, a_scratch, lda);
  const void* b_data = operand_data(b, operand_type, b_scratch, ldb);

  Descs d;
  d.a = row_major(a.rows, a.cols, lda, operand_type);
  const std::int64_t k = a.cols, n = c.cols;
  // Weights are logically (K, N); a transposed operand is stored (N, K), i.e. strides (1, ldb).
  d.b = b_transposed ? dnnl::memory::desc({k, n}, operand_type, dnnl::memory::dims{1, ldb})
                     : row_major(k, n, ldb, operand_type);
  d.c = row_major(c.rows, c.cols, c.ld, dnnl_type(c.dtype));
  if (epilogue.multiplier)
    d.multiplier =
        row_major(c.rows, c.cols, epilogue.multiplier->ld, dnnl_type(epilogue.multiplier->dtype));
  const Chain chain = chain_of(epilogue, n, d.multiplier);
  if (!chain.supported) return false;

  // Some oneDNN CPUs lack f32 -> bf16 matmuls: such a GEMM writes f32 into scratch and rounds
  // each row to bf16 after the call (the epilogue stays fused).
  Context& ctx = context();
  std::optional<Primitive> primitive =
      find_or_make(ctx, primitive_key(operand_type, a, b, b_transposed, c, epilogue), d, chain);
  F32Buffer c_scratch(0);
  void* c_data = c.data;
  if (!primitive && c.dtype == KB_BF16) {
    d.c = row_major(c.rows, c.cols, c.cols, dt::f32);
    primitive = find_or_make(
        ctx, primitive_key(operand_type, a, b, b_transposed, c, epilogue) + "f32dst", d, chain);
    c_scratch = F32Buffer(static_cast<std::size_t>(c.rows * c.cols));
    c_data = c_scratch.data();
  }
  if (!primitive) return false;

  auto memory = [&](const dnnl::memory::desc& md, const void* p) {
    return dnnl::memory(md, ctx.engine, const_cast<void*>(p));
  };
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, memory(d.a, a_data)},
      {DNNL_ARG_WEIGHTS, memory(d.b, b_data)},
      {DNNL_ARG_DST, memory(d.c, c_data)},
  };
  for (const BinaryOperand& operand : chain.operands)
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(operand.index) | DNNL_ARG_SRC_1,
                 memory(operand.desc, operand.data));
  F32Buffer scratchpad((primitive->scratchpad.get_size() + sizeof(float) - 1) / sizeof(float));
  args.emplace(DNNL_ARG_SCRATCHPAD, memory(primitive->scratchpad, scratchpad.data()));
  // A stream per call: streams are not thread-safe, and spread_library_calls makes calls from
  // several threads at once.
  dnnl::stream stream(ctx.engine);
  primitive->matmul.execute(stream, args);
  stream.wait();
  if (c_data != c.data) {
#pragma omp parallel for schedule(static) if (c.rows * c.cols >= kParallelElements)
    for (std::int64_t r = 0; r < c.rows; ++r)
      convert_f32_to_bf16(c_scratch.data() + r * c.cols, static_cast<bf16_t*>(c.data) + r * c.ld,
                          static_cast<std::size_t>(c.cols));
  }
  // oneDNN has no post-op that rounds to bf16 and keeps f32: a pass of its own.
  if (epilogue.round_to_bf16 && c.dtype == KB_F32) {
#pragma omp parallel for schedule(static) if (c.rows * c.cols >= kParallelElements)
    for (std::int64_t r = 0; r < c.rows; ++r)
      round_to_bf16_inplace(static_cast<float*>(c.data) + r * c.ld,
                            static_cast<std::size_t>(c.cols));
  }
  return true;
}

}  // namespace kbench::ops::detail
