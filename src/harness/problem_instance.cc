// Input generation, publication and integrity checks for one problem instance.
#include "harness/problem_instance.h"

#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/input_gen.h"

namespace kbench {
namespace {

std::vector<TensorSpec> input_specs(const Problem& p) {
  std::vector<TensorSpec> specs;
  for (const InputSpec& in : p.inputs) specs.push_back(in.tensor);
  return specs;
}

}  // namespace

ProblemInstance::ProblemInstance(const Workload& workload, Size size)
    : workload_(workload),
      size_(size),
      problem_(workload.problem(size)),
      shared_inputs_(SharedTensors::create(input_specs(problem_), "kbench-inputs",
                                           /*writable_only_here=*/true)),
      sealed_(shared_inputs_.sealed_against_writes()) {
  for (const InputSpec& in : problem_.inputs) inputs_.emplace_back(in.tensor);
}

void ProblemInstance::generate(std::uint64_t seed) {
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    kb_tensor view = inputs_[i].view();
    fill_input(problem_.inputs[i].init, seed, static_cast<std::uint32_t>(i), view);
    std::memcpy(shared_inputs_.views()[i].data, inputs_[i].data(), inputs_[i].spec().bytes());
  }
  private_current_ = true;
}

void ProblemInstance::generate_shared(std::uint64_t seed) {
  if (!sealed_) return generate(seed);
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    fill_input(problem_.inputs[i].init, seed, static_cast<std::uint32_t>(i),
               shared_inputs_.views()[i]);
  private_current_ = false;
}

bool ProblemInstance::inputs_intact() const {
  if (!private_current_) return shared_inputs_.sealed_against_writes();
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    if (std::memcmp(shared_inputs_.views()[i].data, inputs_[i].data(), inputs_[i].spec().bytes()) !=
        0)
      return false;
  return true;
}

std::vector<TensorSpec> ProblemInstance::output_specs(kb_dtype dtype) const {
  std::vector<TensorSpec> specs = problem_.outputs;
  for (TensorSpec& s : specs)
    if (s.dtype == KB_BF16) s.dtype = dtype;
  return specs;
}

std::vector<HostTensor> ProblemInstance::run_trusted(KernelFn kernel, int threads,
                                                     kb_dtype output_dtype) {
  return run_on(kernel, threads, output_dtype, private_views());
}

std::vector<HostTensor> ProblemInstance::run_trusted_replacing(KernelFn kernel, int threads,
                                                               std::size_t index,
                                                               HostTensor& replacement) {
  std::vector<kb_tensor> in = private_views();
  if (index >= inputs_.size() || !(replacement.spec() == inputs_[index].spec()))
    throw std::logic_error("run_trusted_replacing: the replacement is not that input's shape");
  in[index] = replacement.view();
  return run_on(kernel, threads, KB_F32, std::move(in));
}

std::vector<kb_tensor> ProblemInstance::private_views() {
  if (!private_current_)
    throw std::logic_error("run_trusted after generate_shared: the private inputs are stale");
  return views_of(inputs_);
}

std::vector<HostTensor> ProblemInstance::term_magnitudes(int threads) {
  if (workload_.term_magnitude == nullptr) return {};
  return run_on_current(workload_.term_magnitude, threads);
}

std::vector<HostTensor> ProblemInstance::oracle(int threads) {
  return run_on_current(workload_.baseline, threads);
}

std::vector<HostTensor> ProblemInstance::run_on_current(KernelFn kernel, int threads) {
  if (private_current_) return run_trusted(kernel, threads, KB_F32);
  // After generate_shared the shared inputs are current, and sealed: no worker changed them.
  const auto shared = shared_inputs_.views();
  return run_on(kernel, threads, KB_F32, std::vector<kb_tensor>(shared.begin(), shared.end()));
}

std::vector<HostTensor> ProblemInstance::run_on(KernelFn kernel, int threads, kb_dtype output_dtype,
                                                std::vector<kb_tensor> in) {
  std::vector<HostTensor> outputs;
  for (const TensorSpec& s : output_specs(output_dtype)) outputs.emplace_back(s);
  std::vector<kb_tensor> out = views_of(outputs);
  const std::vector<kb_param> params = abi_params(problem_);
  const kb_config config{threads, static_cast<int32_t>(params.size()), params.data()};
  const int rc = kernel(&config, in.data(), static_cast<int32_t>(in.size()), out.data(),
                        static_cast<int32_t>(out.size()));
  if (rc != 0)
    throw std::runtime_error(std::string(workload_.name) + ": built-in kernel returned " +
                             std::to_string(rc));
  return outputs;
}

}  // namespace kbench
