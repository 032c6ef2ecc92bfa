#include "harness/single_call.h"

#include <cstring>

#include "harness/problem_instance.h"
#include "harness/shared_tensors.h"
#include "harness/worker_process.h"

namespace kbench {

CandidateCalls call_candidate(const EvalOptions& options, const std::string& so_path,
                              std::uint64_t seed, int calls) {
  ProblemInstance instance(*options.workload, options.size);
  instance.generate_shared(seed);
  SharedTensors outputs = SharedTensors::create(instance.problem().outputs, "kbench-outputs");
  CandidateCalls result;
  CallOutcome failure;
  const std::unique_ptr<WorkerProcess> worker = WorkerProcess::start(
      {seat_conditions(options, instance.shared_inputs_fd(), worker_cpus(options.threads)), so_path,
       outputs.fd()},
      failure);
  if (!worker) {
    result.error = "the worker did not start: " + failure.message;
    return result;
  }
  result.sandbox = worker->sandbox();
  for (int i = 0; i < calls; ++i) {
    const CallOutcome call = worker->call(options.call_timeout_s);
    if (call.status != CallStatus::kOk) {
      result.error = call.message.empty() ? "the call failed" : call.message;
      return result;
    }
    if (i == 0 || call.seconds < result.best_seconds) result.best_seconds = call.seconds;
    if (i > 0) continue;
    for (const kb_tensor& t : outputs.views()) {
      const auto size = static_cast<std::size_t>(kb_numel(&t)) * dtype_size(t.dtype);
      const auto* data = static_cast<const std::byte*>(t.data);
      result.outputs.emplace_back(data, data + size);
    }
  }
  return result;
}

}  // namespace kbench
