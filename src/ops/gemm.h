// The GEMM building block of every matmul-class baseline: C = epilogue(A @ op(B)) on bf16 or f32
// operands, through whichever library path is fastest on this machine for this shape class, with
// the elementwise epilogue fused into the GEMM output as a compiler fuses it (oneDNN post-ops, or
// one pass per output tile while the tile is still in cache).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kbench/kernel.h"
#include "ops/buffers.h"

namespace kbench::ops {

// The honest library paths for a bf16 GEMM with f32 accumulation.
enum class GemmPath {
  kOnednnBf16,  // oneDNN matmul on bf16 operands (its own AMX / avx512_bf16 / emulation dispatch)
  kOnednnF32,   // widen to f32, oneDNN f32 matmul
  kOpenblasSgemm,  // widen to f32, OpenBLAS sgemm
  kMklBf16,  // oneMKL cblas_gemm_bf16bf16f32 on bf16 operands (its AMX / avx512_bf16 dispatch)
  kMklSgemm  // widen to f32, oneMKL cblas_sgemm
};
inline constexpr GemmPath kAllGemmPaths[] = {GemmPath::kOnednnBf16, GemmPath::kOnednnF32,
                                             GemmPath::kOpenblasSgemm, GemmPath::kMklBf16,
                                             GemmPath::kMklSgemm};
// "onednn_bf16" | "onednn_f32" | "openblas_sgemm" | "mkl_bf16" | "mkl_sgemm"
const char* gemm_path_name(GemmPath path);
std::optional<GemmPath> parse_gemm_path(std::string_view name);
// Whether the path takes bf16 operands as they are (and so cannot run an f32 operand).
bool takes_bf16_operands(GemmPath path);
// The libraries this process can run paths on ("onednn+openblas+mkl", or without "+mkl" when MKL
// is not loaded): measured path choices are kept per this set, so installing MKL measures again.
std::string gemm_libraries();

// A row-major matrix operand: bf16 or f32 values, `rows` x `cols`, rows `ld` elements apart.
struct Matrix {
  const void* data = nullptr;
  kb_dtype dtype = KB_BF16;
  std::int64_t rows = 0, cols = 0, ld = 0;
};
struct MutableMatrix {
  void* data = nullptr;
  kb_dtype dtype = KB_BF16;
  std::int64_t rows = 0, cols = 0, ld = 0;
};

// Elementwise functions of one f32 value (each as jax.nn / oneDNN define it):
//   relu(y) = max(y, 0); silu(y) = y * sigmoid(y); gelu_tanh(y) = 0.5 y (1 + tanh(sqrt(2/pi)
//   (y + 0.044715 y^3))); gelu_erf(y) = 0.5 y (1 + erf(y / sqrt(2))); tanh; mish(y) = y *
//   tanh(softplus(y)), softplus(y) = log(1 + exp(y)); sigmoid(y) = 1 / (1 + exp(-y)).
enum class Activation { kNone, kRelu, kSilu, kGeluTanh, kGeluErf, kTanh, kMish, kSigmoid };

// The arithmetic of a binary post-op: y = y (op) operand.
enum class BinaryOp { kAdd, kSubtract, kMultiply, kDivide };

// One step of an epilogue's post-op chain, on the f32 value y of C's element in column j. Build
// them with the named constructors; each maps to one oneDNN post-op and to the same arithmetic on
// the OpenBLAS path.
struct PostOp {
  enum class Kind {
    kActivation,  // y = activation(y)
    kLinear,      // y = alpha * y + beta (eltwise_linear)
    kClip,        // y = min(max(y, alpha), beta): hardtanh / jnp.clip (eltwise_clip)
    kLeakyRelu,   // y = y >= 0 ? y : alpha * y: where(y >= 0, y, slope * y) (eltwise_relu)
    kScalar,      // y = y (op) alpha, one scalar for every element
    kColumn       // y = y (op) values[j], one f32 value per column of C (a broadcast row vector)
  };
  Kind kind = Kind::kActivation;
  Activation activation = Activation::kNone;
  BinaryOp op = BinaryOp::kAdd;
  float alpha = 0.0f, beta = 0.0f;
  const float* values = nullptr;  // kColumn: f32, C.cols values, alive for the call

  static PostOp act(Activation a) { return {Kind::kActivation, a}; }
  static PostOp linear(float scale, float shift) {
    return {Kind::kLinear, Activation::kNone, BinaryOp::kAdd, scale, shift};
  }
  static PostOp clip(float lo, float hi) {
    return {Kind::kClip, Activation::kNone, BinaryOp::kAdd, lo, hi};
  }
  static PostOp leaky_relu(float slope) {
    return {Kind::kLeakyRelu, Activation::kNone, BinaryOp::kAdd, slope};
  }
  static PostOp scalar(BinaryOp o, float operand) {
    return {Kind::kScalar, Activation::kNone, o, operand};
  }
  static PostOp column(BinaryOp o, const float* per_column) {
    return {Kind::kColumn, Activation::kNone, o, 0.0f, 0.0f, per_column};
  }
};

// Applied to each element of the f32 product in this order before the single store into C:
//   y = alpha * (A @ op(B)); y += bias[col]; y = act(y); y *= multiplier[row, col];
//   then each of post_ops in order.
struct Epilogue {
  float alpha = 1.0f;
  const float* bias = nullptr;  // f32, one per column of C; null for none
  Activation activation = Activation::kNone;
  std::optional<Matrix> multiplier;  // same extents as C; null for none
  std::vector<PostOp> post_ops;      // at most kMaxPostOps
  // Each result rounded to bf16 and kept in an f32 C: a bf16 intermediate held widened, so that the
  // GEMM that reads it next needs no widening pass of its own (32k's second GEMM on the Emerald
  // Rapids VM: 8.5 ms on its bf16 hidden activation, 7.4 ms on the same values in f32). No effect
  // where C is bf16, which rounds anyway.
  bool round_to_bf16 = false;
};

// oneDNN takes at most 32 post-ops; the epilogue's fixed steps use up to four of them.
inline constexpr std::size_t kMaxPostOps = 24;

// The shape class a path choice is made for: everything that changes which library is fastest.
struct GemmShapeClass {
  std::int64_t m = 0, n = 0, k = 0;
  bool b_transposed = false;
  bool f32_operands = false;  // any operand f32 (the oracle, or an f32 intermediate)
  int threads = 1;
  // What the epilogue computes (ops/epilogue_signature.h; "" for none): oneDNN fuses it, the other
  // paths run it as a pass over the product, so it can change which path is fastest.
  std::string epilogue;
  // "768x2688x768:nn:bf16:t1", then ":" and the epilogue's signature when there is one.
  std::string key() const;
};

// C[M,N] = epilogue(A[M,K] @ op(B)), op(B) = B[K,N], or B[N,K]^T when b_transposed. Rounds to C's
// dtype once, at the end. Bf16 operands take the path the process plan chose for their shape class
// (the default path when the plan has none, recording the class as requested); f32 operands always
// run in f32 (oneDNN f32 or OpenBLAS, per the plan), so the f32 oracle never rounds.
void gemm(const Matrix& a, const Matrix& b, bool b_transposed, const MutableMatrix& c,
          const Epilogue& epilogue = {});

// The same GEMM on an explicitly chosen path; false when this machine's libraries cannot run it
// (e.g. oneDNN has no bf16 matmul for this CPU).
bool gemm_on_path(GemmPath path, const Matrix& a, const Matrix& b, bool b_transposed,
                  const MutableMatrix& c, const Epilogue& epilogue = {});

// One tiny call on each MKL path, so that MKL opens its core, threading and per-ISA kernel
// libraries and reads the CPU now: a worker calls it before it confines itself (both seats alike).
void load_gemm_libraries();

// A rank >= 1 tensor as a matrix: its last axis is the columns, all others flattened into rows.
Matrix matrix_of(const kb_tensor& t);
MutableMatrix mutable_matrix_of(kb_tensor& t);

// A scratch activation of rows x cols in `dtype` (bf16 in the timed baseline, f32 in the oracle,
// so the oracle never rounds between ops), from the baselines' caching allocator.
class ScratchMatrix {
 public:
  ScratchMatrix(kb_dtype dtype, std::int64_t rows, std::int64_t cols);
  Matrix in() const { return {storage_.data(), dtype_, rows_, cols_, cols_}; }
  MutableMatrix out() { return {storage_.data(), dtype_, rows_, cols_, cols_}; }
  void* row(std::int64_t r);

 private:
  F32Buffer storage_;
  kb_dtype dtype_;
  std::int64_t rows_, cols_;
};

// ---- The per-process plan: which path each shape class takes ----

// Whether a GEMM of bf16 operands, C m x n and depth k, with `epilogue`, takes a path on the plan
// that reads bf16 as it is (oneDNN's or oneMKL's bf16 kernels) rather than widening it to f32.
// Asked as a call is, so the plan measures the class. A baseline that stores an intermediate for a
// GEMM asks it: where the answer is no, the intermediate is kept widened (Epilogue::round_to_bf16).
bool gemm_reads_bf16(std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed,
                     const Epilogue& epilogue = {});

// Replaces the plan with `encoded` ("key=path;key=path"); throws std::invalid_argument when
// malformed.
void set_gemm_plan(const std::string& encoded);
std::string gemm_plan_encoded();
// The path gemm() takes for `shape`: the plan's entry for it, else the entry of the nearest class
// the plan measured that differs only in M, N or K (nearest in the sum of the extents' log
// ratios), else the default path. The plan is measured on the shapes of one draw of the inputs;
// a workload whose shapes follow its data (11p's group sizes, 10p's routing, 7p's sequence
// lengths) meets others on every other draw, and on the AMX Xeon the default path (f32 OpenBLAS)
// took 4-8x as long as the bf16 path its neighbours measured fastest.
GemmPath planned_gemm_path(const GemmShapeClass& shape);
// Shape classes gemm() met that the plan had no entry for (cleared by set_gemm_plan).
std::vector<GemmShapeClass> unplanned_gemm_classes();

// Times every path on random operands of `shape` (best of a few calls each, this thread pinned
// where it runs) and returns the fastest that works, with each path's best milliseconds.
struct PathTiming {
  GemmPath path;
  double best_ms;
};
GemmPath measure_fastest_path(const GemmShapeClass& shape, std::vector<PathTiming>* timings);

}  // namespace kbench::ops
