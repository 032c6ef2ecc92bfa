// Draft -> request -> reply -> code -> evaluation -> record, for a batch of drafts at a time.
#include "agents/agent_driver.h"

#include <future>

#include "agents/code_extract.h"
#include "agents/prompt.h"
#include "core/stop_signals.h"

namespace kbench::agents {

SampleJournal::SampleJournal(ResultStore& store, std::int64_t run_id, Environment env)
    : store_(store),
      run_id_(run_id),
      env_(std::move(env)),
      earlier_(store.agent_samples({run_id})) {}

std::optional<Attempt> SampleJournal::find(const std::string& workload, int index) const {
  std::lock_guard lock(mutex_);
  for (const AgentSample& s : earlier_) {
    if (s.workload != workload || s.index != index) continue;
    Attempt attempt{s, std::nullopt};
    if (s.result_id) attempt.evaluation = store_.result_by_id(*s.result_id);
    ++replayed_;
    return attempt;
  }
  return std::nullopt;
}

void SampleJournal::record(AgentSample& sample, const EvalResult* evaluation) {
  std::lock_guard lock(mutex_);
  store_.record_agent_sample(sample, evaluation, env_);
}

AgentDriver::AgentDriver(LlmProvider& llm, Executor& executor, SampleJournal& journal,
                         SampleIdentity identity, int max_tokens, double temperature,
                         Progress progress)
    : llm_(llm),
      executor_(executor),
      journal_(journal),
      identity_(std::move(identity)),
      max_tokens_(max_tokens),
      temperature_(temperature),
      progress_(std::move(progress)) {}

Attempt AgentDriver::finish_without_evaluation(AgentSample sample) {
  journal_.record(sample, nullptr);
  if (progress_) progress_(sample);
  return Attempt{std::move(sample), std::nullopt};
}

std::vector<Attempt> AgentDriver::run(std::vector<Draft> drafts) {
  if (const int signal = stop_signal()) throw RunStopped(signal);
  std::vector<std::optional<Attempt>> attempts(drafts.size());
  std::vector<std::size_t> fresh;
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    attempts[i] = journal_.find(identity_.workload, drafts[i].index);
    if (!attempts[i]) fresh.push_back(i);
  }

  // The requests of the batch go out together; the provider holds them to its concurrency limit.
  struct Generated {
    AgentSample sample;
    std::optional<LlmError> error;
  };
  std::vector<std::future<Generated>> replies;
  for (std::size_t i : fresh) {
    Draft& draft = drafts[i];
    draft.request.max_tokens = max_tokens_;
    draft.request.temperature = temperature_;
    replies.push_back(std::async(std::launch::async, [this, &draft]() {
      Generated g;
      AgentSample& s = g.sample;
      s.run_id = identity_.run_id;
      s.method = identity_.method;
      s.workload = identity_.workload;
      s.size = identity_.size;
      s.model = identity_.model;
      s.index = draft.index;
      s.round = draft.round;
      s.parent = draft.parent;
      s.phase = draft.phase;
      s.plan = draft.plan;
      s.prompt_hash = prompt_hash(draft.request);
      try {
        const ChatReply reply = llm_.complete(draft.request);
        s.reply = reply.text;
        s.prompt_tokens = reply.prompt_tokens;
        s.completion_tokens = reply.completion_tokens;
        s.latency_s = reply.latency_s;
      } catch (const LlmError& e) {
        g.error = e;
      }
      return g;
    }));
  }

  std::vector<std::size_t> to_evaluate;
  std::vector<AgentSample> pending;
  std::vector<std::string> sources;
  std::optional<LlmError> fatal;
  for (std::size_t k = 0; k < fresh.size(); ++k) {
    Generated g = replies[k].get();
    if (g.error && g.error->fatal()) {
      if (!fatal) fatal = g.error;
      continue;
    }
    if (fatal) continue;  // the run stops; unrecorded samples are asked again on resume
    AgentSample& s = g.sample;
    if (g.error) {
      s.status = "llm_error";
      s.error = g.error->what();
      attempts[fresh[k]] = finish_without_evaluation(std::move(s));
      continue;
    }
    ExtractedCode code = extract_candidate(s.reply);
    if (!code.ok) {
      s.status = "no_code";
      s.error = code.reason;
      attempts[fresh[k]] = finish_without_evaluation(std::move(s));
      continue;
    }
    s.code = std::move(code.code);
    sources.push_back(s.code);
    pending.push_back(std::move(s));
    to_evaluate.push_back(fresh[k]);
  }
  if (fatal) throw RunAborted(std::string("the LLM request failed: ") + fatal->what());

  executor_.evaluate(sources, [&](std::size_t k, const EvalResult& result) {
    AgentSample& s = pending[k];
    s.status = status_name(result.status);
    s.error = result.error;
    if (result.status == Status::kCorrect) {
      s.speedup = result.speedup;
      s.speedup_verdict = result.speedup_verdict;
      if (result.utilization && !result.utilization->bound.empty())
        s.pct_roofline = result.utilization->pct_roofline;
    }
    journal_.record(s, &result);
    if (progress_) progress_(s);
    attempts[to_evaluate[k]] = Attempt{s, result};
  });

  std::vector<Attempt> out;
  for (std::optional<Attempt>& a : attempts) out.push_back(std::move(*a));
  return out;
}

}  // namespace kbench::agents
