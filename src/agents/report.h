// The renderings of agent metrics that `kbench agent report` writes (and `kbench agent --json`, the
// JSON one): one function per format, each a pure function of the metrics.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "agents/metrics.h"

namespace kbench::agents {

// {"methods": {"<method>": M, ...}, "overall": M}, where M is
// {"samples", "correct_samples", "per_sample_correctness", "workloads", "solved",
//  "geomean_speedup", "fast_p": {"0", "1", "1.5", "2"}, "fast_p_at": {"<N>": {"0", ...}},
//  "failures": {"<status>": count}, "best_speedup": {"<workload>": number | null},
//  "correctness_by_round": [[round, fraction], ...], "prompt_tokens", "completion_tokens",
//  "llm_seconds"}.
nlohmann::json metrics_json(const AgentMetrics& metrics);
nlohmann::json method_metrics_json(const MethodMetrics& metrics);

// A paper-style table (method | samples | correct % | solved | geomean speedup | fast_0 | fast_1 |
// fast_1.5 | fast_2), fast_p@N, the failure breakdown, best speedup per workload per method and the
// LLM cost, as GitHub-flavoured Markdown.
std::string metrics_markdown(const AgentMetrics& metrics);

// One self-contained HTML page (no scripts, no external resources) with inline SVG charts:
// svg#speedup-chart (rect.bar per workload and method with a best speedup, on a log scale around a
// 1x line), svg#fastp-chart (polyline.fastp-curve per method, circle.fastp-point at p = 0, 1, 1.5,
// 2), svg#rounds-chart (polyline.rounds-line per method, circle.round-point per round), and the
// Markdown report's tables.
std::string metrics_html(const AgentMetrics& metrics);

}  // namespace kbench::agents
