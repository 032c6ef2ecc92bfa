// The GEMM block: path dispatch, the per-process plan, and path measurement. The library calls
// themselves live in gemm_onednn.cc and gemm_openblas.cc.
#include "ops/gemm.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "core/input_gen.h"
#include "core/mkl_runtime.h"
#include "core/tensor.h"
#include "core/timer.h"
#include "ops/epilogue_signature.h"
#include "ops/gemm_paths.h"
#include "ops/library_calls.h"

namespace kbench::ops {
namespace {

struct Plan {
  std::mutex mutex;
  std::map<std::string, GemmPath> paths;
  // The entries of `paths` whose keys parse as shape classes, for classes the plan has no entry
  // for.
  std::vector<std::pair<GemmShapeClass, GemmPath>> measured;
  std::map<std::string, GemmShapeClass> unplanned;
};

Plan& plan() {
  static Plan p;
  return p;
}

// The path when the plan has no class near a shape: the one that works everywhere and was the
// measured best on AVX2 machines without bf16 support (docs/baselines.md).
constexpr GemmPath kDefaultPath = GemmPath::kOpenblasSgemm;

// GemmShapeClass::key() read back: "768x2688x768:nn:bf16:t1".
std::optional<GemmShapeClass> parse_shape_class(const std::string& key) {
  GemmShapeClass c;
  char layout[3] = {}, operands[5] = {};
  long long m = 0, n = 0, k = 0;
  int threads = 0, used = 0;
  if (std::sscanf(key.c_str(), "%lldx%lldx%lld:%2[a-z]:%4[a-z0-9]:t%d%n", &m, &n, &k, layout,
                  operands, &threads, &used) != 6)
    return std::nullopt;
  const auto rest = static_cast<std::size_t>(used);
  if (rest < key.size()) {
    if (key[rest] != ':') return std::nullopt;
    c.epilogue = key.substr(rest + 1);
  }
  c.m = m;
  c.n = n;
  c.k = k;
  c.b_transposed = std::string_view(layout) == "nt";
  c.f32_operands = std::string_view(operands) == "f32";
  c.threads = threads;
  if (c.key() != key || m <= 0 || n <= 0 || k <= 0) return std::nullopt;
  return c;
}

// How far apart two extents are for a path choice: the ratio, not the difference, matters.
double extent_distance(std::int64_t a, std::int64_t b) {
  return std::abs(std::log(static_cast<double>(std::max<std::int64_t>(a, 1))) -
                  std::log(static_cast<double>(std::max<std::int64_t>(b, 1))));
}

// The plan's path for `shape`, whose key is `key` (the caller holds p.mutex); see
// planned_gemm_path.
GemmPath planned_path_locked(const Plan& p, const GemmShapeClass& shape, const std::string& key) {
  if (const auto it = p.paths.find(key); it != p.paths.end()) return it->second;
  std::optional<GemmPath> nearest;
  double nearest_distance = 0;
  for (const auto& [measured, path] : p.measured) {
    if (measured.b_transposed != shape.b_transposed ||
        measured.f32_operands != shape.f32_operands || measured.threads != shape.threads)
      continue;
    // Another epilogue counts as farther than any extents: only where no class has this one.
    constexpr double kOtherEpilogue = 1e3;
    const double distance = extent_distance(measured.m, shape.m) +
                            extent_distance(measured.n, shape.n) +
                            extent_distance(measured.k, shape.k) +
                            (measured.epilogue == shape.epilogue ? 0.0 : kOtherEpilogue);
    if (!nearest || distance < nearest_distance) {
      nearest = path;
      nearest_distance = distance;
    }
  }
  return nearest.value_or(kDefaultPath);
}

// The planned path for `shape`, which is recorded as requested where the plan has no entry for it.
GemmPath requested_path(const GemmShapeClass& shape) {
  Plan& p = plan();
  std::lock_guard lock(p.mutex);
  const std::string key = shape.key();
  if (!p.paths.contains(key)) p.unplanned.emplace(key, shape);
  return planned_path_locked(p, shape, key);
}

bool any_f32(const Matrix& a, const Matrix& b, const Epilogue& epilogue) {
  (void)epilogue;
  return a.dtype == KB_F32 || b.dtype == KB_F32;
}

}  // namespace

const char* gemm_path_name(GemmPath path) {
  switch (path) {
    case GemmPath::kOnednnBf16:
      return "onednn_bf16";
    case GemmPath::kOnednnF32:
      return "onednn_f32";
    case GemmPath::kMklBf16:
      return "mkl_bf16";
    case GemmPath::kMklSgemm:
      return "mkl_sgemm";
    case GemmPath::kOpenblasSgemm:
      break;
  }
  return "openblas_sgemm";
}

bool takes_bf16_operands(GemmPath path) {
  return path == GemmPath::kOnednnBf16 || path == GemmPath::kMklBf16;
}

std::string gemm_libraries() {
  return mkl::runtime() ? "onednn+openblas+mkl" : "onednn+openblas";
}

std::optional<GemmPath> parse_gemm_path(std::string_view name) {
  for (const GemmPath path : kAllGemmPaths)
    if (name == gemm_path_name(path)) return path;
  return std::nullopt;
}

std::string GemmShapeClass::key() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
         (b_transposed ? ":nt" : ":nn") + (f32_operands ? ":f32" : ":bf16") + ":t" +
         std::to_string(threads) + (epilogue.empty() ? "" : ":" + epilogue);
}

bool gemm_on_path(GemmPath path, const Matrix& a, const Matrix& b, bool b_transposed,
                  const MutableMatrix& c, const Epilogue& epilogue) {
  if (a.cols != (b_transposed ? b.cols : b.rows) || c.rows != a.rows ||
      c.cols != (b_transposed ? b.rows : b.cols))
    throw std::invalid_argument("gemm: operand extents do not match");
  if (epilogue.post_ops.size() > kMaxPostOps)
    throw std::invalid_argument("gemm: more than kMaxPostOps post-ops");
  for (const PostOp& op : epilogue.post_ops)
    if (op.kind == PostOp::Kind::kColumn && op.values == nullptr)
      throw std::invalid_argument("gemm: a column post-op without values");
  switch (path) {
    case GemmPath::kOnednnBf16:
      if (a.dtype != KB_BF16 || b.dtype != KB_BF16) return false;
      return detail::onednn_gemm(/*bf16=*/true, a, b, b_transposed, c, epilogue);
    case GemmPath::kOnednnF32:
      return detail::onednn_gemm(/*bf16=*/false, a, b, b_transposed, c, epilogue);
    case GemmPath::kMklBf16:
      return detail::mkl_gemm(/*bf16=*/true, a, b, b_transposed, c, epilogue);
    case GemmPath::kMklSgemm:
      return detail::mkl_gemm(/*bf16=*/false, a, b, b_transposed, c, epilogue);
    case GemmPath::kOpenblasSgemm:
      break;
  }
  return detail::openblas_gemm(a, b, b_transposed, c, epilogue);
}

void load_gemm_libraries() {
  if (!mkl::runtime()) return;
  constexpr std::int64_t kSide = 8;
  std::vector<std::uint16_t> operand(kSide * kSide, 0x3f80);  // bf16 1.0
  std::vector<float> product(kSide * kSide);
  const Matrix m{operand.data(), KB_BF16, kSide, kSide, kSide};
  const MutableMatrix out{product.data(), KB_F32, kSide, kSide, kSide};
  for (const GemmPath path : {GemmPath::kMklBf16, GemmPath::kMklSgemm})
    gemm_on_path(path, m, m, /*b_transposed=*/false, out);
}

Matrix matrix_of(const kb_tensor& t) {
  const std::int64_t cols = t.rank > 0 ? t.shape[t.rank - 1] : 1;
  return {t.data, t.dtype, cols > 0 ? kb_numel(&t) / cols : 0, cols, cols};
}

MutableMatrix mutable_matrix_of(kb_tensor& t) {
  const Matrix m = matrix_of(t);
  return {t.data, t.dtype, m.rows, m.cols, m.ld};
}

ScratchMatrix::ScratchMatrix(kb_dtype dtype, std::int64_t rows, std::int64_t cols)
    : storage_(static_cast<std::size_t>(
          (rows * cols * static_cast<std::int64_t>(dtype_size(dtype)) + 3) / 4)),
      dtype_(dtype),
      rows_(rows),
      cols_(cols) {}

void* ScratchMatrix::row(std::int64_t r) {
  return static_cast<char*>(static_cast<void*>(storage_.data())) +
         r * cols_ * static_cast<std::int64_t>(dtype_size(dtype_));
}

void gemm(const Matrix& a, const Matrix& b, bool b_transposed, const MutableMatrix& c,
          const Epilogue& epilogue) {
  GemmShapeClass shape{a.rows,
                       c.cols,
                       a.cols,
                       b_transposed,
                       any_f32(a, b, epilogue),
                       detail::gemm_threads(),
                       epilogue_signature(epilogue)};
  LibraryCall call;
  call.gemm = shape;
  const NotedLibraryCall noted(call);
  GemmPath path = requested_path(shape);
  // An f32 operand never takes a bf16 path: the oracle must not round its intermediates.
  if (shape.f32_operands && path == GemmPath::kOnednnBf16) path = GemmPath::kOnednnF32;
  if (shape.f32_operands && path == GemmPath::kMklBf16) path = GemmPath::kMklSgemm;
  if (!gemm_on_path(path, a, b, b_transposed, c, epilogue))
    detail::openblas_gemm(a, b, b_transposed, c, epilogue);
}

bool gemm_reads_bf16(std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed,
                     const Epilogue& epilogue) {
  return takes_bf16_operands(
      requested_path({m, n, k, b_transposed, /*f32_operands=*/false, detail::gemm_threads(),
                      epilogue_signature(epilogue)}));
}

void set_gemm_plan(const std::string& encoded) {
  std::map<std::string, GemmPath> paths;
  std::size_t start = 0;
  while (start < encoded.size()) {
    std::size_t end = encoded.find(';', start);
    if (end == std::string::npos) end = encoded.size();
    const std::string entry = encoded.substr(start, end - start);
    const std::size_t eq = entry.rfind('=');
    const auto path =
        eq == std::string::npos ? std::nullopt : parse_gemm_path(entry.substr(eq + 1));
    if (!path || eq == 0) throw std::invalid_argument("malformed GEMM plan entry '" + entry + "'");
    paths[entry.substr(0, eq)] = *path;
    start = end + 1;
  }
  std::vector<std::pair<GemmShapeClass, GemmPath>> measured;
  for (const auto& [key, path] : paths)
    if (const std::optional<GemmShapeClass> shape = parse_shape_class(key))
      measured.emplace_back(*shape, path);
  Plan& p = plan();
  std::lock_guard lock(p.mutex);
  p.paths = std::move(paths);
  p.measured = std::move(measured);
  p.unplanned.clear();
}

GemmPath planned_gemm_path(const GemmShapeClass& shape) {
  Plan& p = plan();
  std::lock_guard lock(p.mutex);
  return planned_path_locked(p, shape, shape.key());
}

std::string gemm_plan_encoded() {
  Plan& p = plan();
  std::lock_guard lock(p.mutex);
  std::string out;
  for (const auto& [key, path] : p.paths) {
    if (!out.empty()) out += ';';
    out += key + "=" + gemm_path_name(path);
  }
  return out;
}

std::vector<GemmShapeClass> unplanned_gemm_classes() {
  Plan& p = plan();
  std::lock_guard lock(p.mutex);
  std::vector<GemmShapeClass> out;
  for (const auto& [key, shape] : p.unplanned) out.push_back(shape);
  return out;
}

GemmPath measure_fastest_path(const GemmShapeClass& shape, std::vector<PathTiming>* timings) {
  const kb_dtype operand_dtype = shape.f32_operands ? KB_F32 : KB_BF16;
  HostTensor a({"a", operand_dtype, {shape.m, shape.k}});
  HostTensor b({"b",
                operand_dtype,
                {shape.b_transposed ? shape.n : shape.k, shape.b_transposed ? shape.k : shape.n}});
  HostTensor c({"c", shape.f32_operands ? KB_F32 : KB_BF16, {shape.m, shape.n}});
  kb_tensor a_view = a.view(), b_view = b.view();
  fill_input(InitRule::normal(1.0), 1, 0, a_view);
  fill_input(InitRule::normal(0.02), 1, 1, b_view);
  const Matrix ma{a.data(), operand_dtype, shape.m, shape.k, shape.k};
  const Matrix mb{b.data(), operand_dtype, b_view.shape[0], b_view.shape[1], b_view.shape[1]};
  const MutableMatrix mc{c.data(), c.spec().dtype, shape.m, shape.n, shape.n};
  const SampleEpilogue sample(shape.epilogue, shape.m, shape.n);
  const Epilogue& epilogue = sample.epilogue();

  // Paths take turns, one call each per round, so a burst of load from other processes hits them
  // alike; each path's figure is its best call, since interference only adds time. On one thread a
  // call counts the smaller of its wall and CPU time: time another process held the core is not
  // the library's. Bounded to about three seconds per class; the first call of each path (primitive
  // creation, page faults) is not counted.
  constexpr int kRounds = 9;
  constexpr double kBudgetS = 3.0;
  std::vector<GemmPath> candidates;
  for (const GemmPath path : kAllGemmPaths) {
    if (shape.f32_operands && takes_bf16_operands(path)) continue;
    if (gemm_on_path(path, ma, mb, shape.b_transposed, mc, epilogue)) candidates.push_back(path);
  }
  std::vector<double> best_call_ms(candidates.size(), 0);
  const double start = now_seconds();
  for (int round = 0; round < kRounds; ++round) {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const double ms = timed_calls_ms(
          [&] { gemm_on_path(candidates[i], ma, mb, shape.b_transposed, mc, epilogue); },
          shape.threads == 1);
      best_call_ms[i] = round == 0 ? ms : std::min(best_call_ms[i], ms);
    }
    if (round >= 2 && now_seconds() - start > kBudgetS) break;
  }
  // Then calls of each path back to back, as a kernel that calls it repeatedly runs it: warm in the
  // caches the other paths' turns evicted (measured: at tiny shapes the turns alone left the best
  // call 1.6x slower than repeated calls, so a baseline beat its own "ceiling").
  constexpr int kBackToBackBatches = 4;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const double ms = best_back_to_back_ms(
        [&] { gemm_on_path(candidates[i], ma, mb, shape.b_transposed, mc, epilogue); },
        shape.threads == 1, kBackToBackBatches);
    best_call_ms[i] = std::min(best_call_ms[i], ms);
  }
  std::optional<GemmPath> best;
  double best_ms = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (timings) timings->push_back({candidates[i], best_call_ms[i]});
    if (!best || best_call_ms[i] < best_ms) {
      best = candidates[i];
      best_ms = best_call_ms[i];
    }
  }
  return best.value_or(kDefaultPath);
}

}  // namespace kbench::ops
