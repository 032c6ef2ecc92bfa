// Turns a method's drafts (what to ask, and where the sample sits in the search) into evaluated,
// recorded samples: the LLM request, the code extraction, the evaluation through the executor,
// and the store, with replay of what an interrupted earlier attempt of the run already recorded.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "agents/llm.h"
#include "core/environment.h"
#include "harness/executor.h"
#include "store/agent_sample.h"
#include "store/store.h"

namespace kbench::agents {

// The request for one sample and its place in the method's search.
struct Draft {
  int index = 0;
  int round = 0;
  std::optional<int> parent;
  std::string phase;
  std::string plan;
  ChatRequest request;
};

// A sample with its evaluation (absent for samples that never reached the evaluator).
struct Attempt {
  AgentSample sample;
  std::optional<EvalResult> evaluation;
  bool correct() const { return sample.status == "correct"; }
  double speedup_or_zero() const { return sample.speedup.value_or(0); }
};

// What every sample of one workload in one run shares.
struct SampleIdentity {
  std::int64_t run_id = 0;
  std::string method;
  std::string workload;
  std::string size;
  std::string model;
};

// The run's record in the store, shared by the workloads' drivers: writes are serialized, and the
// samples an earlier attempt of the same run stored are found by (workload, index).
class SampleJournal {
 public:
  SampleJournal(ResultStore& store, std::int64_t run_id, Environment env);
  std::optional<Attempt> find(const std::string& workload, int index) const;
  void record(AgentSample& sample, const EvalResult* evaluation);
  std::int64_t run_id() const { return run_id_; }
  int replayed() const { return replayed_; }

 private:
  ResultStore& store_;
  std::int64_t run_id_;
  Environment env_;
  std::vector<AgentSample> earlier_;
  mutable std::mutex mutex_;
  mutable int replayed_ = 0;
};

// The request failed in a way no later sample would escape (the server refuses the key, the model
// is unknown, nothing listens): the run stops, unfinished and resumable, instead of burning its
// budget on samples that all fail alike.
class RunAborted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SIGINT or SIGTERM asked the run to stop (core/stop_signals.h): the batch before this one was
// recorded whole, and the run is left for the same command to resume.
class RunStopped : public std::runtime_error {
 public:
  explicit RunStopped(int by) : std::runtime_error("stopped by a signal"), signal(by) {}
  int signal;
};

class AgentDriver {
 public:
  using Progress = std::function<void(const AgentSample&)>;
  AgentDriver(LlmProvider& llm, Executor& executor, SampleJournal& journal, SampleIdentity identity,
              int max_tokens, double temperature, Progress progress = {});

  // Every draft's attempt, in draft order: replayed when the journal has it, else generated (the
  // requests concurrently, as the provider allows), extracted and evaluated as one batch. Throws
  // RunStopped, before asking anything, once a stop was asked for.
  std::vector<Attempt> run(std::vector<Draft> drafts);

 private:
  Attempt finish_without_evaluation(AgentSample sample);

  LlmProvider& llm_;
  Executor& executor_;
  SampleJournal& journal_;
  SampleIdentity identity_;
  int max_tokens_;
  double temperature_;
  Progress progress_;
};

}  // namespace kbench::agents
