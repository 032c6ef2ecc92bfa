// Checks the flash-attention driver (experts/include/flash_attention.h) outside kbench on the path
// KB_MAX_ISA forces: edge shapes (one key, Dk and Dv not multiples of 16 or 32, Dk != Dv, key
// counts off the block, GQA, causal offsets, decode-like rows that all see every key, fewer keys
// than the causal limit, paged K/V), every output against a double-precision reference, on 1 and
// 2 threads, twice per problem (the second call reuses the thread's scratch).
//
//   g++ -std=c++20 -O2 -march=native -fopenmp -Wall -Wextra -Iinclude -Itests/experts
//       [-DKB_MAX_ISA=0|1|2|3] [-DKB_AMX_MODEL] tests/experts/flash_attention_check.cpp -o /tmp/fa
//   /tmp/fa            exit 0 pass, 1 fail, 77 when this CPU does not take the forced path
// With -DKB_AMX_MODEL (and KB_MAX_ISA 3) the AMX path runs on the software tile model.
//
// The bound. The reference is o = sum_j w_j v_j, w = softmax(scale * q.k) over the n visible
// keys, in double from the same bf16 inputs. Per output element, with A = sum_j w_j |v_j|:
//   - the bf16 probabilities of the AMX path: p_j (1 + e_j), |e_j| <= u = 2^-8 (bf16 keeps 8
//     significant bits, rounded to nearest), and the row sum adds the same rounded values, so
//     w'_j = w_j (1 + e_j) / (1 + e) with e a weighted mean of the e_j:
//     |w'_j - w_j| <= w_j 2u / (1 - u), hence |o' - o| <= 2u / (1 - u) A;
//   - f32 arithmetic (every path): the exponent x_j = scale log2(e) q.k_j carries an error of at
//     most ~(Dk + 8) 2^-24 X, X the largest |scale log2(e)| sum_d |q_d k_jd| of the row, which is
//     a relative error ln(2) times that in each 2^x, twice after normalizing; the f32 sums of P V
//     and of l over n keys (with a rescale per key block) at most (n + 16) 2^-24 relative each;
//     the exp2 polynomial 1.2e-7, bounded here by 1e-6;
//   - the output rounding to bf16: u |o'|.
// So |got - o| <= u (|o| + E) + E, with
//   E = (2.01 u [AMX] + 2 ln(2) (Dk + 8) 2^-24 X + 2 (n + 16) 2^-24 + 1e-6) A.
#ifdef KB_AMX_MODEL
#include "amx_tile_model.h"
#endif
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "../../experts/include/flash_attention.h"

namespace {

struct Case {
  const char* name;
  int64_t hq, hkv, rows, offset, keys, dim_k, dim_v;
  float scale;            // 0: Dk^-0.5
  int64_t page_rows = 0;  // > 0: K and V in shuffled pages of that many rows
};

struct Tally {
  int64_t checked = 0, bad = 0;
  double worst = 0;  // largest |error| / bound
};

std::vector<std::uint16_t> random_bf16(std::mt19937& rng, int64_t n) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::uint16_t> x(static_cast<size_t>(n));
  for (auto& e : x) e = kb_f32_to_bf16(normal(rng));
  return x;
}

double bf(std::uint16_t x) {
  return kb_bf16_to_f32(x);
}

// Query head h's rows against kv head h / G; out (hq, rows, Dv).
bool run_case(const Case& c, int threads, Tally& tally) {
  std::mt19937 rng(static_cast<unsigned>(c.rows * 131 + c.keys * 7 + c.dim_k));
  const float scale = c.scale != 0 ? c.scale : 1.0f / std::sqrt(static_cast<float>(c.dim_k));
  const int64_t group = c.hq / c.hkv;
  // K and V: per kv head, keys rows, contiguous or in pages (row stride dim, page stride
  // page_rows * dim, pages in a shuffled order).
  const int64_t page_rows = c.page_rows > 0 ? c.page_rows : c.keys;
  const int64_t pages = (c.keys + page_rows - 1) / page_rows;
  std::vector<std::int32_t> order(static_cast<size_t>(pages));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const std::vector<std::uint16_t> q = random_bf16(rng, c.hq * c.rows * c.dim_k);
  const std::vector<std::uint16_t> k = random_bf16(rng, c.hkv * pages * page_rows * c.dim_k);
  const std::vector<std::uint16_t> v = random_bf16(rng, c.hkv * pages * page_rows * c.dim_v);
  const auto k_at = [&](int64_t h, int64_t j, int64_t d) {
    return bf(k[((h * pages + order[j / page_rows]) * page_rows + j % page_rows) * c.dim_k + d]);
  };
  const auto v_at = [&](int64_t h, int64_t j, int64_t d) {
    return bf(v[((h * pages + order[j / page_rows]) * page_rows + j % page_rows) * c.dim_v + d]);
  };

  std::vector<flash::KvHead> kv(static_cast<size_t>(c.hkv));
  for (int64_t h = 0; h < c.hkv; ++h) {
    flash::Rows kr{k.data() + h * pages * page_rows * c.dim_k, c.dim_k};
    flash::Rows vr{v.data() + h * pages * page_rows * c.dim_v, c.dim_v};
    if (c.page_rows > 0) {
      kr.pages = vr.pages = order.data();
      kr.page_rows = vr.page_rows = page_rows;
      kr.page_ld = page_rows * c.dim_k;
      vr.page_ld = page_rows * c.dim_v;
    }
    kv[h] = {kr, vr, c.keys};
  }
  std::vector<std::uint16_t> out(static_cast<size_t>(c.hq * c.rows * c.dim_v)), first;
  std::vector<flash::QueryItem> items(static_cast<size_t>(c.hq));
  for (int64_t h = 0; h < c.hq; ++h)
    items[h] = {q.data() + h * c.rows * c.dim_k,
                c.dim_k,
                out.data() + h * c.rows * c.dim_v,
                c.dim_v,
                c.rows,
                c.offset,
                h / group};
  const flash::Problem problem{c.dim_k, c.dim_v, scale, kv.data(), items.data(), c.hq};
  for (int call = 0; call < 2; ++call) {
    std::fill(out.begin(), out.end(), std::uint16_t{0x7fc0});  // NaN where nothing was written
    if (flash::attend(problem, threads) != 0) return false;
    if (call == 0) first = out;
  }
  bool same = first == out;

  const bool amx = flash::detail::select_path().isa == isa::Isa::kAmx;
  const double u = std::ldexp(1.0, -8);
  std::vector<double> w(static_cast<size_t>(c.keys));
  for (int64_t h = 0; h < c.hq; ++h)
    for (int64_t t = 0; t < c.rows; ++t) {
      const int64_t seen = std::min(c.offset + t + 1, c.keys);
      double mx = -INFINITY, x_abs = 0;
      for (int64_t j = 0; j < seen; ++j) {
        double dot = 0, dot_abs = 0;
        for (int64_t d = 0; d < c.dim_k; ++d) {
          const double qk = bf(q[(h * c.rows + t) * c.dim_k + d]) * k_at(h / group, j, d);
          dot += qk;
          dot_abs += std::fabs(qk);
        }
        w[j] = scale * dot;
        mx = std::max(mx, w[j]);
        x_abs = std::max(x_abs, std::fabs(scale) * dot_abs / std::log(2.0));
      }
      double sum = 0;
      for (int64_t j = 0; j < seen; ++j) sum += (w[j] = std::exp(w[j] - mx));
      const double ulp32 = std::ldexp(1.0, -24);
      const double e_f32 = 2 * std::log(2.0) * (c.dim_k + 8) * ulp32 * x_abs +
                           2.0 * static_cast<double>(seen + 16) * ulp32 + 1e-6;
      for (int64_t d = 0; d < c.dim_v; ++d) {
        double ref = 0, mean_abs = 0;
        for (int64_t j = 0; j < seen; ++j) {
          ref += w[j] / sum * v_at(h / group, j, d);
          mean_abs += w[j] / sum * std::fabs(v_at(h / group, j, d));
        }
        const double e = ((amx ? 2.01 * u : 0.0) + e_f32) * mean_abs;
        const double bound = u * (std::fabs(ref) + e) + e + 1e-30;
        const double got = bf(out[(h * c.rows + t) * c.dim_v + d]);
        const double err = std::fabs(got - ref);
        ++tally.checked;
        tally.worst = std::max(tally.worst, err / bound);
        if (!(err <= bound)) {
          if (tally.bad < 5)
            std::printf("  %s h=%ld t=%ld d=%ld: got %.6g want %.6g (bound %.3g)\n", c.name, h, t,
                        d, got, ref, bound);
          ++tally.bad;
        }
      }
    }
  return same;
}

}  // namespace

int main() {
  // The path asked for (KB_MAX_ISA) must be the one this CPU takes, or the check is skipped
  // (CTest's SKIP_RETURN_CODE).
  if (flash::detail::select_path().isa != static_cast<isa::Isa>(KB_MAX_ISA)) return 77;
  const Case cases[] = {
      {"one key", 1, 1, 1, 0, 1, 32, 32, 0},
      {"tiny dims", 1, 1, 3, 0, 3, 1, 1, 0},
      {"seq 17 D64 G2", 2, 1, 17, 0, 17, 64, 64, 0},
      {"seq 100 D128 G2", 4, 2, 100, 0, 100, 128, 128, 0},
      {"seq 257 D40", 1, 1, 257, 0, 257, 40, 40, 0},
      {"offset 157 D72 G3", 3, 1, 100, 157, 257, 72, 72, 0},
      {"decode 8 rows D128", 1, 1, 8, 299, 300, 128, 128, 0},
      {"decode 16 heads paged", 2, 2, 16, 399, 400, 128, 128, 0, 16},
      {"keys < limit", 2, 1, 50, 20, 40, 64, 64, 0},
      {"Dk 96 Dv 48", 2, 2, 70, 3, 73, 96, 48, 0},
      {"Dk 40 Dv 72 offset 1", 1, 1, 33, 1, 34, 40, 72, 0},
      {"scale 1 D128 (peaked)", 2, 1, 130, 0, 130, 128, 128, 1.0f},
      {"ragged paged D128 G4", 8, 2, 129, 77, 206, 128, 128, 0, 16},
  };
  int failed = 0;
  for (const Case& c : cases)
    for (int threads : {1, 2}) {
      Tally tally;
      const bool same = run_case(c, threads, tally);
      const bool ok = same && tally.bad == 0 && tally.checked > 0;
      std::printf("%-5s %-24s threads %d: %ld outputs, %ld outside the bound, worst %.3f of it%s\n",
                  ok ? "ok" : "FAIL", c.name, threads, tally.checked, tally.bad, tally.worst,
                  same ? "" : ", calls differ");
      failed += !ok;
    }
#ifdef KB_AMX_MODEL
  // The check means nothing for AMX unless the tile model computed the products.
  if (emu_dp_count == 0) {
    std::printf("the AMX path did not run\n");
    return 1;
  }
#endif
  return failed == 0 ? 0 : 1;
}
