// Epilogue signatures: what they say of an epilogue, that a sample epilogue built from one has the
// same signature and computes finite values, that a malformed one is refused, and that the GEMM
// plan keeps classes with different epilogues apart.
#include "ops/epilogue_signature.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ops/gemm.h"

namespace kbench::ops {
namespace {

const float kColumn[3] = {1.0f, 2.0f, 3.0f};
const float kBias[3] = {0.0f, 0.5f, 1.0f};
const std::uint16_t kMultiplier[6] = {};

std::vector<Epilogue> epilogues() {
  return {
      {},
      {.alpha = 0.125f},
      {.bias = kBias, .activation = Activation::kMish},
      {.activation = Activation::kGeluErf,
       .multiplier = Matrix{kMultiplier, KB_BF16, 2, 3, 3},
       .post_ops = {PostOp::act(Activation::kSigmoid)}},
      {.post_ops = {PostOp::linear(2.0f, 1.0f), PostOp::clip(-1.0f, 1.0f), PostOp::leaky_relu(0.1f),
                    PostOp::scalar(BinaryOp::kDivide, 3.0f),
                    PostOp::column(BinaryOp::kSubtract, kColumn)}},
      {.bias = kBias, .activation = Activation::kSigmoid, .round_to_bf16 = true},
  };
}

TEST(EpilogueSignature, NamesEachStepInOrder) {
  EXPECT_EQ(epilogue_signature({}), "");
  EXPECT_EQ(epilogue_signature({.alpha = 0.125f, .bias = kBias, .activation = Activation::kRelu}),
            "scale+bias+act.relu");
  EXPECT_EQ(epilogue_signature(epilogues()[3]), "act.gelu_erf+mul.bf16+post.sigmoid");
  EXPECT_EQ(epilogue_signature(epilogues()[4]),
            "post.linear+post.clip+post.leakyrelu+post.div+post.col.sub");
  EXPECT_EQ(epilogue_signature(epilogues()[5]), "bias+act.sigmoid+round.bf16");
}

TEST(EpilogueSignature, ASampleHasTheSameStepsAndFiniteValues) {
  const std::int64_t m = 5, n = 7, k = 3;
  std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f);
  for (const Epilogue& e : epilogues()) {
    const std::string signature = epilogue_signature(e);
    SCOPED_TRACE(signature);
    const SampleEpilogue sample(signature, m, n);
    EXPECT_EQ(epilogue_signature(sample.epilogue()), signature);
    HostTensor c({"c", KB_F32, {m, n}});
    ASSERT_TRUE(gemm_on_path(GemmPath::kOpenblasSgemm, {a.data(), KB_F32, m, k, k},
                             {b.data(), KB_F32, k, n, n}, false, {c.data(), KB_F32, m, n, n},
                             sample.epilogue()));
    for (std::int64_t i = 0; i < m * n; ++i)
      EXPECT_TRUE(std::isfinite(static_cast<const float*>(c.data())[i])) << i;
  }
}

TEST(EpilogueSignature, AMalformedSignatureIsRefused) {
  for (const char* bad : {"act.softmax", "bias+", "post.col.pow", "mul.f16", "scale+bias=1"})
    EXPECT_THROW(SampleEpilogue(bad, 2, 2), std::invalid_argument) << bad;
}

// A class takes a path measured with its own epilogue, however far its extents, before one
// measured bare or with another: the epilogue can decide which path is fastest.
TEST(EpilogueSignature, ThePlanPrefersAClassWithTheSameEpilogue) {
  set_gemm_plan(
      "768x1536x1536:nn:bf16:t1=mkl_bf16;"
      "64x64x64:nn:bf16:t1:bias+act.mish+post.mish=onednn_bf16");
  const GemmShapeClass mish{768, 1536, 1536, false, false, 1, "bias+act.mish+post.mish"};
  EXPECT_EQ(planned_gemm_path(mish), GemmPath::kOnednnBf16);
  GemmShapeClass silu = mish;
  silu.epilogue = "bias+act.silu";  // no class with it: the nearest extents
  EXPECT_EQ(planned_gemm_path(silu), GemmPath::kMklBf16);
  set_gemm_plan("");
}

}  // namespace
}  // namespace kbench::ops
