// ops::gemm on every library path against a double-precision reference: edge shapes, both layouts
// of B, every epilogue, bf16 and f32 outputs; and the per-process plan's encoding.
#include "ops/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "core/bf16.h"
#include "core/input_gen.h"
#include "core/tensor.h"
#include "ops/epilogue_signature.h"
#include "ops/gemm_paths.h"

namespace kbench::ops {
namespace {

struct Case {
  std::int64_t m, n, k;
  bool b_transposed;
};

double activate(Activation act, double x) {
  switch (act) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return x < 0 ? 0 : x;
    case Activation::kSilu:
      return x / (1 + std::exp(-x));
    case Activation::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case Activation::kGeluErf:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::kTanh:
      return std::tanh(x);
    case Activation::kMish:
      return x * std::tanh(std::log1p(std::exp(x)));
    case Activation::kSigmoid:
      return 1 / (1 + std::exp(-x));
  }
  return x;
}

double binary(BinaryOp op, double x, double operand) {
  switch (op) {
    case BinaryOp::kAdd:
      return x + operand;
    case BinaryOp::kSubtract:
      return x - operand;
    case BinaryOp::kMultiply:
      return x * operand;
    case BinaryOp::kDivide:
      break;
  }
  return x / operand;
}

// One post-op on the double value x in column j.
double post_op(const PostOp& op, double x, std::int64_t j) {
  switch (op.kind) {
    case PostOp::Kind::kActivation:
      return activate(op.activation, x);
    case PostOp::Kind::kLinear:
      return op.alpha * x + op.beta;
    case PostOp::Kind::kClip:
      return std::min<double>(std::max<double>(x, op.alpha), op.beta);
    case PostOp::Kind::kLeakyRelu:
      return x >= 0 ? x : op.alpha * x;
    case PostOp::Kind::kScalar:
      return binary(op.op, x, op.alpha);
    case PostOp::Kind::kColumn:
      break;
  }
  return binary(op.op, x, op.values[j]);
}

struct Operands {
  HostTensor a, b, bias, mult, column;
};

Operands make_operands(const Case& c, kb_dtype operand_dtype, std::uint64_t seed) {
  Operands o{
      HostTensor({"a", operand_dtype, {c.m, c.k}}),
      HostTensor({"b", operand_dtype, {c.b_transposed ? c.n : c.k, c.b_transposed ? c.k : c.n}}),
      HostTensor({"bias", KB_F32, {c.n}}), HostTensor({"mult", KB_BF16, {c.m, c.n}}),
      HostTensor({"column", KB_F32, {c.n}})};
  kb_tensor views[] = {o.a.view(), o.b.view(), o.bias.view(), o.mult.view(), o.column.view()};
  fill_input(InitRule::normal(1.0), seed, 0, views[0]);
  fill_input(InitRule::normal(0.1), seed, 1, views[1]);
  fill_input(InitRule::normal(0.5), seed, 2, views[2]);
  fill_input(InitRule::normal(1.0), seed, 3, views[3]);
  // Positive and away from zero, so that it can divide.
  fill_input(InitRule::uniform(0.5, 1.5), seed, 4, views[4]);
  return o;
}

double value(const HostTensor& t, std::int64_t i) {
  return t.spec().dtype == KB_BF16 ? bf16_to_f32(t.as<bf16_t>()[i]) : t.as<float>()[i];
}

// Max |got - want| / (1 + |want|) of the path's result against the double reference.
// Which parts of the epilogue a case uses; the operands are made per case.
struct EpilogueCase {
  float alpha = 1.0f;
  bool bias = false;
  Activation activation = Activation::kNone;
  bool multiplier = false;
  // Column post-ops without values read the case's per-column operand.
  std::vector<PostOp> post_ops;
};

double gemm_error(GemmPath path, const Case& c, kb_dtype operand_dtype, kb_dtype out_dtype,
                  const EpilogueCase& parts, bool& ran) {
  Operands o = make_operands(c, operand_dtype, 7);
  Epilogue e{.alpha = parts.alpha, .activation = parts.activation};
  if (parts.bias) e.bias = o.bias.as<float>();
  if (parts.multiplier) e.multiplier = Matrix{o.mult.data(), KB_BF16, c.m, c.n, c.n};
  e.post_ops = parts.post_ops;
  for (PostOp& op : e.post_ops)
    if (op.kind == PostOp::Kind::kColumn && op.values == nullptr) op.values = o.column.as<float>();
  HostTensor out({"c", out_dtype, {c.m, c.n}});
  const Matrix a{o.a.data(), operand_dtype, c.m, c.k, c.k};
  const std::int64_t b_rows = c.b_transposed ? c.n : c.k, b_cols = c.b_transposed ? c.k : c.n;
  const Matrix b{o.b.data(), operand_dtype, b_rows, b_cols, b_cols};
  ran = gemm_on_path(path, a, b, c.b_transposed, {out.data(), out_dtype, c.m, c.n, c.n}, e);
  if (!ran) return 0;
  double worst = 0;
  for (std::int64_t i = 0; i < c.m; ++i) {
    for (std::int64_t j = 0; j < c.n; ++j) {
      double acc = 0;
      for (std::int64_t p = 0; p < c.k; ++p)
        acc += value(o.a, i * c.k + p) * value(o.b, c.b_transposed ? j * c.k + p : p * c.n + j);
      double want = e.alpha * acc;
      if (e.bias) want += o.bias.as<float>()[j];
      want = activate(e.activation, want);
      if (e.multiplier) want *= value(o.mult, i * c.n + j);
      for (const PostOp& op : e.post_ops) want = post_op(op, want, j);
      const double got = value(out, i * c.n + j);
      worst = std::max(worst, std::abs(got - want) / (1 + std::abs(want)));
    }
  }
  return worst;
}

const Case kCases[] = {{1, 1, 1, false},    {37, 61, 45, false}, {37, 61, 45, true},
                       {16, 32, 64, false}, {65, 17, 130, true}, {130, 257, 33, false}};

const EpilogueCase kEpilogues[] = {
    {},
    {.alpha = 0.125f},
    {.bias = true, .activation = Activation::kRelu},
    {.activation = Activation::kSilu, .multiplier = true},
    {.alpha = 2.0f, .bias = true, .activation = Activation::kGeluTanh},
    {.activation = Activation::kGeluErf},
    // Post-op chains: each kind, scalar and per-column operands, after every fixed step.
    {.bias = true,
     .post_ops = {PostOp::scalar(BinaryOp::kSubtract, 0.5f),
                  PostOp::scalar(BinaryOp::kMultiply, 1.5f), PostOp::act(Activation::kRelu)}},
    {.bias = true,
     .post_ops = {PostOp::scalar(BinaryOp::kMultiply, 2.0f), PostOp::leaky_relu(0.1f)}},
    {.bias = true, .post_ops = {PostOp::act(Activation::kMish), PostOp::act(Activation::kMish)}},
    {.alpha = 0.5f,
     .post_ops = {PostOp::linear(0.5f, 0.25f), PostOp::clip(-0.5f, 0.5f),
                  PostOp::act(Activation::kGeluTanh)}},
    {.bias = true,
     .post_ops = {PostOp::act(Activation::kSilu), PostOp::act(Activation::kTanh),
                  PostOp::act(Activation::kGeluErf), PostOp::clip(-1.0f, 1.0f)}},
    {.post_ops = {PostOp::column(BinaryOp::kSubtract, nullptr),
                  PostOp::column(BinaryOp::kDivide, nullptr),
                  PostOp::column(BinaryOp::kMultiply, nullptr),
                  PostOp::column(BinaryOp::kAdd, nullptr), PostOp::scalar(BinaryOp::kAdd, 0.1f),
                  PostOp::scalar(BinaryOp::kDivide, 3.0f), PostOp::act(Activation::kSigmoid)}},
    {.activation = Activation::kSilu,
     .multiplier = true,
     .post_ops = {PostOp::act(Activation::kTanh)}},
    // Pre-activations of several hundred, beyond where exp overflows f32 or leaves its valid range.
    {.alpha = 300.0f, .activation = Activation::kSilu},
    {.alpha = 300.0f, .activation = Activation::kMish},
    {.alpha = 300.0f, .post_ops = {PostOp::act(Activation::kSigmoid)}},
    // Repeats of one eltwise algorithm with other parameters, which oneDNN 2.6 would run with the
    // first's: a second linear is split into binary post-ops; a second clip leaves oneDNN out.
    {.post_ops = {PostOp::linear(2.0f, 0.5f), PostOp::act(Activation::kTanh),
                  PostOp::linear(-1.0f, 0.25f)}},
    {.post_ops = {PostOp::clip(-1.5f, 1.5f), PostOp::act(Activation::kTanh),
                  PostOp::clip(-0.5f, 0.25f), PostOp::leaky_relu(0.5f), PostOp::leaky_relu(0.25f)}},
};

class GemmPathTest : public ::testing::TestWithParam<GemmPath> {};

TEST_P(GemmPathTest, MatchesReferenceOnEdgeShapesAndEveryEpilogue) {
  const GemmPath path = GetParam();
  int ran_count = 0;
  for (const kb_dtype operands : {KB_BF16, KB_F32}) {
    for (const kb_dtype out : {KB_BF16, KB_F32}) {
      for (const Case& c : kCases) {
        for (std::size_t ei = 0; ei < std::size(kEpilogues); ++ei) {
          const EpilogueCase& e = kEpilogues[ei];
          bool ran = false;
          const double err = gemm_error(path, c, operands, out, e, ran);
          if (!ran) continue;
          ++ran_count;
          // bf16 output: one rounding (2^-8 relative) plus f32 accumulation; f32 output: f32 sums.
          const double bound = out == KB_BF16 ? 1e-2 : 2e-4;
          EXPECT_LE(err, bound) << gemm_path_name(path) << " " << c.m << "x" << c.n << "x" << c.k
                                << (c.b_transposed ? " nt" : " nn") << " epilogue " << ei << " act "
                                << static_cast<int>(e.activation) << " operands "
                                << dtype_name(operands) << " out " << dtype_name(out);
        }
      }
    }
  }
  if (path == GemmPath::kOpenblasSgemm || path == GemmPath::kOnednnF32) {
    EXPECT_GT(ran_count, 0) << "the f32 paths run on every x86-64 CPU";
  }
  if (ran_count == 0) GTEST_SKIP() << gemm_path_name(path) << " is not available on this CPU";
}

// An f32 result with round_to_bf16 holds, element for element, the bf16 rounding of what the same
// path computes without it.
TEST_P(GemmPathTest, RoundsAnF32ResultToBf16WhenAsked) {
  const GemmPath path = GetParam();
  for (const kb_dtype operands : {KB_BF16, KB_F32}) {
    for (const Case& c : kCases) {
      Operands o = make_operands(c, operands, 11);
      const Matrix a{o.a.data(), operands, c.m, c.k, c.k};
      const std::int64_t b_cols = c.b_transposed ? c.k : c.n;
      const Matrix b{o.b.data(), operands, c.b_transposed ? c.n : c.k, b_cols, b_cols};
      Epilogue e{.bias = o.bias.as<float>(), .activation = Activation::kSigmoid};
      HostTensor exact({"exact", KB_F32, {c.m, c.n}}), rounded({"rounded", KB_F32, {c.m, c.n}});
      if (!gemm_on_path(path, a, b, c.b_transposed, {exact.data(), KB_F32, c.m, c.n, c.n}, e))
        continue;
      e.round_to_bf16 = true;
      ASSERT_TRUE(
          gemm_on_path(path, a, b, c.b_transposed, {rounded.data(), KB_F32, c.m, c.n, c.n}, e));
      for (std::int64_t i = 0; i < c.m * c.n; ++i) {
        ASSERT_EQ(rounded.as<float>()[i], round_to_bf16(exact.as<float>()[i]))
            << gemm_path_name(path) << " " << c.m << "x" << c.n << "x" << c.k << " element " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPaths, GemmPathTest, ::testing::ValuesIn(kAllGemmPaths),
                         [](const auto& path) { return std::string(gemm_path_name(path.param)); });

// oneDNN 2.6 would run a second clip with the first's bounds: its paths decline such a chain, and
// gemm() on a plan that names oneDNN still computes it, on OpenBLAS.
TEST(GemmPostOps, ChainOnednnCannotRunTakesOpenblas) {
  const Case c{37, 61, 45, false};
  Operands o = make_operands(c, KB_F32, 3);
  const Epilogue e{.post_ops = {PostOp::clip(-1.0f, 1.0f), PostOp::clip(-0.25f, 0.5f)}};
  const Matrix a{o.a.data(), KB_F32, c.m, c.k, c.k};
  const Matrix b{o.b.data(), KB_F32, c.k, c.n, c.n};
  HostTensor out({"c", KB_F32, {c.m, c.n}});
  const MutableMatrix mc{out.data(), KB_F32, c.m, c.n, c.n};
  EXPECT_FALSE(gemm_on_path(GemmPath::kOnednnF32, a, b, false, mc, e));
  const GemmShapeClass shape{
      c.m, c.n, c.k, false, true, detail::gemm_threads(), epilogue_signature(e)};
  set_gemm_plan(shape.key() + "=onednn_f32");
  gemm(a, b, false, mc, e);
  set_gemm_plan("");
  for (std::int64_t i = 0; i < c.m; ++i) {
    for (std::int64_t j = 0; j < c.n; ++j) {
      double acc = 0;
      for (std::int64_t p = 0; p < c.k; ++p)
        acc += value(o.a, i * c.k + p) * value(o.b, p * c.n + j);
      const double want = std::min(std::max(std::min(std::max(acc, -1.0), 1.0), -0.25), 0.5);
      ASSERT_NEAR(value(out, i * c.n + j), want, 1e-5) << i << "," << j;
    }
  }
}

// The f32 oneDNN path reads a widened bf16 operand with ld = cols and an f32 one with its own ld:
// two calls with equal extents and ld but different operand dtypes need different primitives (a
// cache keyed without the dtypes once ran the second call with the first one's strides).
TEST(GemmOnednn, OperandDtypeIsPartOfThePrimitive) {
  const std::int64_t m = 19, k = 23, n = 29, lda = 40;
  HostTensor a32({"a32", KB_F32, {m, lda}}), a16({"a16", KB_BF16, {m, lda}});
  HostTensor b({"b", KB_F32, {k, n}});
  kb_tensor views[] = {a32.view(), b.view()};
  fill_input(InitRule::normal(1.0), 5, 0, views[0]);
  fill_input(InitRule::normal(0.1), 5, 1, views[1]);
  for (std::int64_t i = 0; i < m * lda; ++i) a16.as<bf16_t>()[i] = f32_to_bf16(a32.as<float>()[i]);
  const Matrix mb{b.data(), KB_F32, k, n, n};
  for (const kb_dtype a_dtype : {KB_F32, KB_BF16, KB_F32}) {
    const HostTensor& a = a_dtype == KB_F32 ? a32 : a16;
    HostTensor out({"c", KB_F32, {m, n}});
    const Matrix ma{const_cast<void*>(a.data()), a_dtype, m, k, lda};
    if (!gemm_on_path(GemmPath::kOnednnF32, ma, mb, false, {out.data(), KB_F32, m, n, n}, {}))
      GTEST_SKIP() << "no oneDNN f32 matmul here";
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (std::int64_t p = 0; p < k; ++p) want += value(a, i * lda + p) * value(b, p * n + j);
        ASSERT_NEAR(out.as<float>()[i * n + j], want, 1e-4 * (1 + std::fabs(want)))
            << dtype_name(a_dtype) << " A, element " << i << "," << j;
      }
    }
  }
}

TEST(GemmPlan, RoundTripsAndRejectsMalformed) {
  set_gemm_plan("8x8x8:nn:bf16:t1=onednn_bf16;4x4x4:nt:f32:t2=openblas_sgemm");
  EXPECT_EQ(gemm_plan_encoded(), "4x4x4:nt:f32:t2=openblas_sgemm;8x8x8:nn:bf16:t1=onednn_bf16");
  EXPECT_THROW(set_gemm_plan("8x8x8:nn:bf16:t1=cublas"), std::invalid_argument);
  EXPECT_THROW(set_gemm_plan("=onednn_bf16"), std::invalid_argument);
  set_gemm_plan("");
  EXPECT_EQ(gemm_plan_encoded(), "");
}

TEST(GemmPlan, RecordsUnplannedClassesAndFollowsThePlan) {
  set_gemm_plan("");
  const Case c{8, 8, 8, false};
  Operands o = make_operands(c, KB_BF16, 3);
  HostTensor out({"c", KB_BF16, {8, 8}});
  gemm({o.a.data(), KB_BF16, 8, 8, 8}, {o.b.data(), KB_BF16, 8, 8, 8}, false,
       {out.data(), KB_BF16, 8, 8, 8});
  const auto unplanned = unplanned_gemm_classes();
  ASSERT_EQ(unplanned.size(), 1u);
  EXPECT_EQ(unplanned[0].m, 8);
  EXPECT_FALSE(unplanned[0].f32_operands);
  set_gemm_plan(unplanned[0].key() + "=onednn_f32");
  gemm({o.a.data(), KB_BF16, 8, 8, 8}, {o.b.data(), KB_BF16, 8, 8, 8}, false,
       {out.data(), KB_BF16, 8, 8, 8});
  EXPECT_TRUE(unplanned_gemm_classes().empty());
  set_gemm_plan("");
}

// Asking whether a class's path reads bf16 records the class for the plan, as a call would, and
// answers from the plan.
TEST(GemmPlan, WhetherAPathReadsBf16IsAskedOfThePlanAndRecordsTheClass) {
  set_gemm_plan("");
  EXPECT_FALSE(gemm_reads_bf16(8, 16, 32, true));  // the default path widens
  const auto unplanned = unplanned_gemm_classes();
  ASSERT_EQ(unplanned.size(), 1u);
  GemmShapeClass asked = unplanned[0];
  EXPECT_EQ(asked.key(), "8x16x32:nt:bf16:t" + std::to_string(asked.threads));
  const Epilogue sigmoid{.activation = Activation::kSigmoid};
  GemmShapeClass with_sigmoid = asked;
  with_sigmoid.epilogue = "act.sigmoid";
  set_gemm_plan(asked.key() + "=onednn_bf16;" + with_sigmoid.key() + "=mkl_sgemm");
  EXPECT_TRUE(gemm_reads_bf16(8, 16, 32, true));
  EXPECT_FALSE(gemm_reads_bf16(8, 16, 32, true, sigmoid));
  EXPECT_TRUE(unplanned_gemm_classes().empty());
  set_gemm_plan(asked.key() + "=mkl_bf16");
  EXPECT_TRUE(gemm_reads_bf16(8, 16, 32, true));
  set_gemm_plan("");
}

TEST(GemmPlan, MeasuresAWorkingPath) {
  std::vector<PathTiming> timings;
  const GemmPath best = measure_fastest_path({64, 64, 64, false, false, 1}, &timings);
  ASSERT_FALSE(timings.empty());
  bool best_timed = false;
  for (const PathTiming& t : timings) {
    EXPECT_GT(t.best_ms, 0);
    best_timed |= t.path == best;
  }
  EXPECT_TRUE(best_timed);
}

}  // namespace
}  // namespace kbench::ops
