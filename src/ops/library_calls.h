// The library calls (GEMMs and convolutions) a kernel of kbench's makes, recorded while it runs,
// and what each costs on its own: the parts of a workload's library ceiling, the time the
// machine's fastest library paths need for the baseline's own calls at their own shapes, with
// nothing between them (harness/roofline.h).
#pragma once

#include <string>
#include <vector>

#include "ops/conv.h"
#include "ops/gemm.h"

namespace kbench::ops {

// One convolution call: everything that changes its cost.
struct ConvCall {
  ConvGeometry geometry;
  kb_dtype src_dtype = KB_BF16, weights_dtype = KB_BF16, dst_dtype = KB_F32;
  ConvLayout layout = ConvLayout::kPlain;
  int threads = 1;
  // "conv2d 2x3x32x32->16 k3x3 s1x1 p0x0:bf16:bf16:f32:plain:t1" ("convT3d ..." transposed).
  std::string key() const;
};

struct LibraryCall {
  enum class Kind { kGemm, kConv };
  Kind kind = Kind::kGemm;
  GemmShapeClass gemm;  // kGemm
  ConvCall conv;        // kConv
  int count = 0;        // how many times the kernel made this call
  double seconds = 0;   // the wall time inside these calls, summed
  // Some of these calls came from inside an OpenMP parallel region, where the library gets one
  // thread of the budget (and `seconds` may count time that overlapped).
  bool in_parallel_region = false;
  // They were spread over this many threads by spread_library_calls, one thread each (0: not).
  int spread_over = 0;
  std::string key() const;  // "gemm <GemmShapeClass::key()>" or "<ConvCall::key()>"
  double flops() const;     // of one call: 2 m n k, or conv_direct_flops
};

// Records every gemm() and conv() this process makes from now on (what was recorded before is
// dropped), until stop_recording_library_calls().
void start_recording_library_calls();
// Stops recording; the calls made meanwhile, one entry per key with its count, in first-call
// order.
std::vector<LibraryCall> stop_recording_library_calls();

// gemm() and conv() hold one for the length of each call: it counts the call, and adds its wall
// time when it ends, to the recording if one is on (otherwise it costs one atomic load).
class NotedLibraryCall {
 public:
  explicit NotedLibraryCall(const LibraryCall& call);
  ~NotedLibraryCall();
  NotedLibraryCall(const NotedLibraryCall&) = delete;
  NotedLibraryCall& operator=(const NotedLibraryCall&) = delete;

 private:
  std::string key_;  // empty when nothing is recording
  double start_s_ = 0;
};

// ---- The per-process library plan: the path each of a baseline's library calls takes ----

// Replaces the plan with `encoded`: "key=path" entries separated by ';', a ConvCall::key() with a
// conv_path_name() for a convolution, anything else a GEMM entry for set_gemm_plan. Throws
// std::invalid_argument when an entry is malformed.
void set_library_plan(const std::string& encoded);
// The path conv() takes for `call`: the plan's entry for it, else conv_default_path(), which
// assumes native bf16 is the faster (on the Emerald Rapids VM, without AMX, it was 1.5-2.3x
// slower than f32 for every conv of the suite).
ConvPath planned_conv_path(const ConvCall& call);

// The best time of `call` alone (no epilogue) on each convolution path this machine's oneDNN runs,
// on random operands, the calling thread pinned where it is: {path name, best ms} per path.
std::vector<std::pair<std::string, double>> measure_conv_paths(const ConvCall& call);

}  // namespace kbench::ops
