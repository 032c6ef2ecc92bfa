// One workload at one size, materialized: kbench's private copy of the inputs (the truth the oracle
// sees) and the shared, sealed copy the workers read, refilled from a fresh seed before every call.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/tensor.h"
#include "harness/shared_tensors.h"
#include "workloads/workload.h"

namespace kbench {

class ProblemInstance {
 public:
  ProblemInstance(const Workload& workload, Size size);

  const Workload& workload() const { return workload_; }
  const Problem& problem() const { return problem_; }
  Size size() const { return size_; }
  int shared_inputs_fd() const { return shared_inputs_.fd(); }
  // The inputs the workers read, as kbench maps them.
  std::span<const kb_tensor> shared_inputs() const { return shared_inputs_.views(); }
  // kbench's private copy of the inputs generate() drew last, in call order.
  const std::vector<HostTensor>& inputs() const { return inputs_; }

  // Draws every input from `seed` (input i uses Philox stream i) and publishes it to the workers.
  void generate(std::uint64_t seed);
  // The same, drawn straight into the shared inputs, without updating the private copy that
  // inputs(), run_trusted() and inputs_intact() use: for timed calls, whose inputs only the workers
  // read. Falls back to generate() where the shared inputs could not be sealed against writes.
  void generate_shared(std::uint64_t seed);
  // False when the shared inputs may no longer equal what kbench wrote (a kernel wrote to its
  // inputs). Where the shared inputs are sealed against writes (no worker can change them) after
  // generate_shared(), it only checks the seal; otherwise it compares them byte for byte with the
  // private copy.
  bool inputs_intact() const;
  // The shared inputs carry the write seal (SharedTensors::sealed_against_writes).
  bool inputs_sealed() const { return sealed_; }

  // Runs `kernel` in this process on the private inputs with f32 outputs: the oracle (baseline) or
  // the truth (reference). Only ever called with kbench's own trusted code.
  std::vector<HostTensor> run_trusted(KernelFn kernel, int threads, kb_dtype output_dtype = KB_F32);
  // The same, with input `index` replaced by `replacement` (of that input's spec): the program a
  // kernel computes that ignores the input drawn there (harness/suite_checks.h).
  std::vector<HostTensor> run_trusted_replacing(KernelFn kernel, int threads, std::size_t index,
                                                HostTensor& replacement);

  std::vector<TensorSpec> output_specs(kb_dtype dtype) const;

  // The workload's term magnitudes (Workload::term_magnitude) of the inputs generate() or
  // generate_shared() drew last, as f32 tensors of the outputs' shapes: what the rule's term_rtol
  // multiplies. Empty when the workload has none.
  std::vector<HostTensor> term_magnitudes(int threads);
  // The oracle (the baseline with f32 outputs) of the inputs generate() or generate_shared() drew
  // last.
  std::vector<HostTensor> oracle(int threads);

 private:
  // Runs `kernel` with f32 outputs on the inputs generate() or generate_shared() drew last.
  std::vector<HostTensor> run_on_current(KernelFn kernel, int threads);
  // Views of the private inputs; throws when generate_shared has left them stale.
  std::vector<kb_tensor> private_views();
  std::vector<HostTensor> run_on(KernelFn kernel, int threads, kb_dtype output_dtype,
                                 std::vector<kb_tensor> in);

  const Workload& workload_;
  Size size_;
  Problem problem_;
  std::vector<HostTensor> inputs_;
  SharedTensors shared_inputs_;
  bool sealed_ = false;
  bool private_current_ = true;  // the private copy holds what the shared inputs hold
};

}  // namespace kbench
