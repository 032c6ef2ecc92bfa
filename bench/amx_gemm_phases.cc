// Where the AMX path of 8p's expert GEMM (experts/include/blocked_gemm.h) spends its time at 8p's
// cpu size (M = K = 768, N = 2688) on one thread, one phase at a time, each reported as the whole
// product's FLOPs over the phase's time (FLOP/s; compare with `kbench probe`'s AMX-BF16 peak):
//   Call          gemm_amx as the expert calls it: everything below, in the expert's order
//   PackA         every 16-row tile strip of A over all of K (amx_pack_a)
//   PackB         every NC-column panel of B into the pair-interleaved layout (amx_pack_panel)
//   BlocksL2      the tile blocks over panels packed beforehand (amx_panel_blocks): B streamed
//                 from L2 as in the call, the sums between K passes in L2, C rounded and written
//   BlocksL1      the same FLOPs as 8-step tile blocks with every operand in L1: one 32 x 256 strip
//                 of A against one 256 x 32 panel of B, again and again, each block's C zeroed,
//                 stored and rounded (the loop's rate without its data traffic; the call reloads
//                 C between its three K passes and rounds once every three blocks instead)
// Skipped where the CPU or the kernel has no AMX. Prints speeds; never passes or fails.
//   build/bench/amx_gemm_phases --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "include/blocked_gemm.h"

namespace {

using namespace blocked_gemm;

constexpr std::int64_t kM = 768, kK = 768, kN = 2688;
// The expert's defaults (experts/8p_GEMM.cpp: KB_AMX_KC, KB_AMX_NC).
constexpr AmxBlocking kBlocking{256, 672};

struct Operands {
  std::vector<std::uint16_t> a, b, c;
  Gemm g;
  Operands() : a(kM * kK), b(kK * kN), c(kM * kN) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (auto& x : a) x = kb_f32_to_bf16(normal(rng));
    for (auto& x : b) x = kb_f32_to_bf16(0.02f * normal(rng));
    g = {a.data(), kK, b.data(), kN, c.data(), kN, kM, kK, kN};
  }
};

constexpr std::int64_t kKTiles = kK / kTileK;
constexpr std::int64_t kATileStrips = 2 * kM / kBlock;  // 16-row strips of A
constexpr std::int64_t kPanelElems = 2 * (kBlocking.nc / kBlock) * kKTiles * kTileElems;

void pack_a(const Gemm& g, uint16_t* a_packed) {
  for (std::int64_t mt = 0; mt < kATileStrips; ++mt)
    amx_pack_a(g, mt, kKTiles, a_packed + mt * kKTiles * kTileElems);
}

bool have_amx(benchmark::State& state) {
  if (select_path() == Isa::kAmx) return true;
  state.SkipWithError("this CPU (or its kernel) gives no AMX-BF16");
  return false;
}

void report(benchmark::State& state) {
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * kM * kK * kN * state.iterations(), benchmark::Counter::kIsRate);
}

void Call(benchmark::State& state) {
  if (!have_amx(state)) return;
  Operands op;
  for (auto _ : state) gemm_amx(&op.g, 1, kBlocking, 1);
  report(state);
}

void PackA(benchmark::State& state) {
  if (!have_amx(state)) return;
  Operands op;
  AlignedBuffer a_packed;
  uint16_t* a = a_packed.get<uint16_t>(kATileStrips * kKTiles * kTileElems);
  for (auto _ : state) pack_a(op.g, a);
  report(state);
}

void PackB(benchmark::State& state) {
  if (!have_amx(state)) return;
  Operands op;
  AlignedBuffer panel;
  uint16_t* b = panel.get<uint16_t>(kPanelElems);
  for (auto _ : state)
    for (std::int64_t j0 = 0; j0 < kN; j0 += kBlocking.nc)
      amx_pack_panel(op.g, j0, kBlocking.nc, b);
  report(state);
}

void BlocksL2(benchmark::State& state) {
  if (!have_amx(state)) return;
  Operands op;
  AlignedBuffer a_packed, panels, sums;
  uint16_t* a = a_packed.get<uint16_t>(kATileStrips * kKTiles * kTileElems);
  constexpr std::int64_t kPanels = kN / kBlocking.nc;
  uint16_t* b = panels.get<uint16_t>(kPanels * kPanelElems);
  float* s = sums.get<float>(amx_sums_elems(op.g, kBlocking.nc, kBlocking));
  pack_a(op.g, a);
  for (std::int64_t p = 0; p < kPanels; ++p)
    amx_pack_panel(op.g, p * kBlocking.nc, kBlocking.nc, b + p * kPanelElems);
  amx_tiles::configure();
  for (auto _ : state)
    for (std::int64_t p = 0; p < kPanels; ++p)
      amx_panel_blocks(op.g, a, b + p * kPanelElems, p * kBlocking.nc, kBlocking.nc, kBlocking, s);
  amx_tiles::release();
  report(state);
}

void BlocksL1(benchmark::State& state) {
  if (!have_amx(state)) return;
  Operands op;
  // One 32 x 256 strip of A against one 256 x 32 panel of B (16 KiB each): one K pass of 8 steps
  // per block, three times as many blocks as the call's 32x32 blocks of C.
  constexpr std::int64_t kDepth = 256, kDepthTiles = kDepth / kTileK;
  const Gemm block{op.a.data(), kK, op.b.data(), kN, op.c.data(), kN, kBlock, kDepth, kBlock};
  AlignedBuffer a_packed, panel, sums;
  uint16_t* a = a_packed.get<uint16_t>(2 * kDepthTiles * kTileElems);
  uint16_t* b = panel.get<uint16_t>(2 * kDepthTiles * kTileElems);
  float* s = sums.get<float>(amx_sums_elems(block, kBlock, kBlocking));
  amx_pack_a(block, 0, kDepthTiles, a);
  amx_pack_a(block, 1, kDepthTiles, a + kDepthTiles * kTileElems);
  amx_pack_panel(block, 0, kBlock, b);
  constexpr std::int64_t kBlocks = (kM / kBlock) * (kN / kBlock) * (kK / kDepth);
  amx_tiles::configure();
  for (auto _ : state)
    for (std::int64_t i = 0; i < kBlocks; ++i)
      amx_panel_blocks(block, a, b, 0, kBlock, kBlocking, s);
  amx_tiles::release();
  report(state);
}

BENCHMARK(Call)->Unit(benchmark::kMillisecond);
BENCHMARK(PackA)->Unit(benchmark::kMillisecond);
BENCHMARK(PackB)->Unit(benchmark::kMillisecond);
BENCHMARK(BlocksL2)->Unit(benchmark::kMillisecond);
BENCHMARK(BlocksL1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
