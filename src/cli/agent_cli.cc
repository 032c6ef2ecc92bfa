// Flags of `kbench agent` (fixed: other tools depend on them) and its two subcommands.
#include "cli/agent_cli.h"

#include "cli/shared_options.h"

namespace kbench::cli {

void add_agent_commands(CLI::App& app, AgentCli& cli) {
  AgentOptions& o = cli.run;
  CLI::App* agent = app.add_subcommand(
      "agent", "Generate candidates with an LLM (one of four methods), evaluating every sample");
  agent->require_subcommand(0, 1);
  agent->add_option("--method", o.method, "best-of-n, iterative, iterative-context or beam");
  agent->add_option("--workload,-w", o.workloads, "Workload ids or names (repeatable)");
  agent
      ->add_option("--provider", o.llm.provider,
                   "openai (any OpenAI-compatible server) or anthropic")
      ->capture_default_str();
  agent->add_option("--base-url", o.llm.base_url,
                    "API base URL (default: the provider's public endpoint; e.g. "
                    "http://127.0.0.1:8088/v1 for a local server)");
  agent->add_option("--model", o.llm.model, "Model name as the server knows it");
  agent->add_option("--api-key-env", o.llm.api_key_env,
                    "Environment variable holding the API key (default OPENAI_API_KEY or "
                    "ANTHROPIC_API_KEY; unset: no key)");
  add_size_option(agent, o.size);
  agent->add_option("--samples", o.samples, "Budget: samples per workload")->capture_default_str();
  agent->add_option("--beam-width", o.beam_width, "beam: kernels kept per step")
      ->capture_default_str();
  agent->add_option("--plans", o.plans, "beam: plans per parent")->capture_default_str();
  agent->add_option("--implementations", o.implementations, "beam: implementations per plan")
      ->capture_default_str();
  agent
      ->add_option("--menu-dropout", o.menu_dropout,
                   "beam: chance each optimization-menu entry is left out of a parent's draw")
      ->capture_default_str();
  agent
      ->add_option("--jobs", o.jobs,
                   "Evaluations in flight (compile and check in parallel, timing one at a time); "
                   "0: as this machine's CPUs allow")
      ->capture_default_str();
  agent->add_option("--max-concurrency", o.llm.max_concurrency, "LLM requests in flight")
      ->capture_default_str();
  agent->add_option("--request-timeout-s", o.llm.timeout_s, "Per HTTP request")
      ->capture_default_str();
  agent->add_option("--max-retries", o.llm.max_retries, "On 429, 5xx and transport errors")
      ->capture_default_str();
  agent->add_option("--max-tokens", o.max_tokens, "Per reply")->capture_default_str();
  agent->add_option("--temperature", o.temperature, "Sampling temperature")->capture_default_str();
  add_seed_option(agent, o.seed, "Sampling seed (default: derived from the run's settings)");
  agent->add_option("--context-dir", o.context_dir, "Context artifact root (default: context/)");
  agent->add_option("--target", o.target, "Context target (default: this machine's)");
  agent->add_option("--request-log", o.request_log,
                    "JSON-lines log of every HTTP attempt (default: agent-logs/ beside the db)");
  agent->add_option("--json", o.json, "Write the run's metrics summary (JSON) to this file");
  agent->add_option("--threads", o.threads, "Threads per evaluation")->capture_default_str();
  agent->add_option("--time-budget-s", o.time_budget_s, "Seconds of timing per sample")
      ->capture_default_str();
  agent->add_flag("--analyze", o.analyze,
                  "Analyze each correct sample's loops as `kbench analyze` does (docs/analyze.md), "
                  "record the analysis and feed its top loops back with the verdict");
  add_db_option(agent, o.db);
  agent->footer(
      "Rerunning an interrupted command resumes its run: stored samples are replayed, not asked "
      "again.\nSee docs/agents.md.");
  cli.run_cmd = agent;

  AgentReportOptions& r = cli.report;
  CLI::App* report = agent->add_subcommand("report", "Metrics of stored agent samples");
  report->add_option("--run", r.runs, "Agent run ids (repeatable; default: every run)");
  report->add_option("--format", r.format, "markdown, json or html")->capture_default_str();
  report->add_option("--out,-o", r.out, "File to write (default: stdout)");
  add_db_option(report, r.db);
  cli.report_cmd = report;

  AgentContextOptions& c = cli.context;
  CLI::App* context = agent->add_subcommand(
      "context", "List the context artifact; --write regenerates hardware.md");
  context->add_option("--target", c.target, "Target (default: this machine's)");
  context->add_option("--context-dir", c.context_dir, "Context artifact root (default: context/)");
  context->add_flag("--write", c.write, "Measure this machine and write <target>/hardware.md");
  context->add_option("--threads", c.threads, "Threads for the probe")->capture_default_str();
  cli.context_cmd = context;
}

std::optional<int> run_agent_commands(const AgentCli& cli) {
  if (*cli.report_cmd) return agent_report_command(cli.report);
  if (*cli.context_cmd) return agent_context_command(cli.context);
  if (*cli.run_cmd) return agent_command(cli.run);
  return std::nullopt;
}

}  // namespace kbench::cli
