// Where the AMX path of the experts' tile GEMM (experts/include/blocked_gemm.h) spends its time on
// one thread, one phase at a time, at the cpu sizes of its two users: 8p (one 768 x 768 x 2688
// product) and 11p (16 groups of 128 rows x 1024 x 384, each group with its own weights), at the
// experts' default KC and NC. Each phase is reported as the whole call's FLOPs over the phase's
// time (FLOP/s; compare with `kbench probe`'s AMX-BF16 peak):
//   Call       gemm_amx as the expert calls it: everything below, in the expert's order
//   PackA      every 16-row tile strip of every product's A over all of K (amx_pack_a_all)
//   PackB      every NC-column panel of every product's B, pair-interleaved (amx_pack_panel)
//   BlocksL2   the tile blocks of every panel (amx_panel_blocks) over one packed A and one packed
//              panel reused for all (wrong results, the call's data traffic): as in the call, where
//              each is packed just before its use, B streams from L2 and the sums between K passes
//              stay in L2; C is rounded and written
//   BlocksL1   the call's FLOPs as 8-step tile blocks with every operand in L1: one 32 x 256 strip
//              of A against one 256 x 32 panel of B, again and again, each block's C zeroed,
//              stored and rounded (the loop's rate without its data traffic; the call reloads C
//              between its K passes and rounds once per K pass instead)
// Skipped where the CPU or the kernel has no AMX. Prints speeds; never passes or fails.
//   build/bench/amx_gemm_phases --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "include/blocked_gemm.h"

namespace {

using namespace blocked_gemm;

// `groups` products of m x k by k x n, and the expert's AMX blocking.
struct Shape {
  std::int64_t groups, m, k, n;
  AmxBlocking blocking;
};

// experts/8p_GEMM.cpp and experts/11p_Megablox_GMM.cpp: KB_AMX_KC, KB_AMX_NC.
constexpr Shape k8p{1, 768, 768, 2688, {256, 672}};
constexpr Shape k11p{16, 128, 1024, 384, {256, 384}};

struct Operands {
  std::vector<std::uint16_t> a, b, c;
  std::vector<Gemm> products;
  explicit Operands(const Shape& s)
      : a(s.groups * s.m * s.k), b(s.groups * s.k * s.n), c(s.groups * s.m * s.n) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (auto& x : a) x = kb_f32_to_bf16(normal(rng));
    for (auto& x : b) x = kb_f32_to_bf16(0.02f * normal(rng));
    for (std::int64_t q = 0; q < s.groups; ++q)
      products.push_back({a.data() + q * s.m * s.k, s.k, b.data() + q * s.k * s.n, s.n,
                          c.data() + q * s.m * s.n, s.n, s.m, s.k, s.n});
  }
};

bool have_amx(benchmark::State& state) {
  if (select_path() == Isa::kAmx) return true;
  state.SkipWithError("this CPU (or its kernel) gives no AMX-BF16");
  return false;
}

void report(benchmark::State& state, const Shape& s) {
  state.counters["FLOP/s"] = benchmark::Counter(
      2.0 * s.groups * s.m * s.k * s.n * state.iterations(), benchmark::Counter::kIsRate);
}

void Call(benchmark::State& state, const Shape& s) {
  if (!have_amx(state)) return;
  Operands op(s);
  for (auto _ : state) gemm_amx(op.products.data(), s.groups, s.blocking, 1);
  report(state, s);
}

void PackA(benchmark::State& state, const Shape& s) {
  if (!have_amx(state)) return;
  Operands op(s);
  AlignedBuffer a_packed;
  uint16_t* a = a_packed.get<uint16_t>(amx_packed_a_elems(op.products[0]));
  for (auto _ : state)
    for (const Gemm& g : op.products) amx_pack_a_all(g, a);
  report(state, s);
}

void PackB(benchmark::State& state, const Shape& s) {
  if (!have_amx(state)) return;
  Operands op(s);
  AlignedBuffer panel;
  uint16_t* b = panel.get<uint16_t>(amx_panel_elems(op.products[0], s.blocking.nc));
  for (auto _ : state)
    for (const Gemm& g : op.products)
      for (std::int64_t j0 = 0; j0 < s.n; j0 += s.blocking.nc)
        amx_pack_panel(g, j0, std::min(s.blocking.nc, s.n - j0), b);
  report(state, s);
}

void BlocksL2(benchmark::State& state, const Shape& s) {
  if (!have_amx(state)) return;
  Operands op(s);
  AlignedBuffer a_packed, panel, sums;
  uint16_t* a = a_packed.get<uint16_t>(amx_packed_a_elems(op.products[0]));
  uint16_t* b = panel.get<uint16_t>(amx_panel_elems(op.products[0], s.blocking.nc));
  float* sum = sums.get<float>(amx_sums_elems(op.products[0], s.blocking.nc, s.blocking));
  amx_pack_a_all(op.products[0], a);
  amx_pack_panel(op.products[0], 0, s.blocking.nc, b);
  amx_tiles::configure();
  for (auto _ : state)
    for (const Gemm& g : op.products)
      for (std::int64_t j0 = 0; j0 < s.n; j0 += s.blocking.nc)
        amx_panel_blocks(g, a, b, j0, std::min(s.blocking.nc, s.n - j0), s.blocking, sum);
  amx_tiles::release();
  report(state, s);
}

void BlocksL1(benchmark::State& state, const Shape& s) {
  if (!have_amx(state)) return;
  Operands op(s);
  // One 32 x 256 strip of A against one 256 x 32 panel of B (16 KiB each): one K pass of 8 steps.
  constexpr std::int64_t kDepth = 256;
  const Gemm block{op.a.data(), s.k, op.b.data(), s.n, op.c.data(), s.n, kBlock, kDepth, kBlock};
  AlignedBuffer a_packed, panel, sums;
  uint16_t* a = a_packed.get<uint16_t>(amx_packed_a_elems(block));
  uint16_t* b = panel.get<uint16_t>(amx_panel_elems(block, kBlock));
  float* sum = sums.get<float>(amx_sums_elems(block, kBlock, s.blocking));
  amx_pack_a_all(block, a);
  amx_pack_panel(block, 0, kBlock, b);
  const std::int64_t blocks =
      s.groups * (s.m / kBlock) * (s.n / kBlock) * (s.k / kDepth);  // the call's FLOPs
  amx_tiles::configure();
  for (auto _ : state)
    for (std::int64_t i = 0; i < blocks; ++i)
      amx_panel_blocks(block, a, b, 0, kBlock, s.blocking, sum);
  amx_tiles::release();
  report(state, s);
}

BENCHMARK_CAPTURE(Call, 8p, k8p)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(PackA, 8p, k8p)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(PackB, 8p, k8p)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BlocksL2, 8p, k8p)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BlocksL1, 8p, k8p)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Call, 11p, k11p)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(PackA, 11p, k11p)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(PackB, 11p, k11p)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BlocksL2, 11p, k11p)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BlocksL1, 11p, k11p)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
