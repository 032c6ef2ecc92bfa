// The prompt text. Kept plain and explicit: small local models follow a fixed reply format far
// better than an implied one, and every rule the harness enforces is stated before it can bite.
#include "agents/prompt.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "agents/loop_feedback.h"
#include "core/environment.h"
#include "core/number_format.h"
#include "core/sha256.h"
#include "core/terminal_text.h"
#include "harness/compiler.h"
#include "workloads/spec_text.h"

namespace kbench::agents {
namespace {

// Four significant digits: what a reader of a prompt needs of a time, an error or a tolerance.
std::string significant_4(double value) {
  return significant(value, 4);
}

constexpr std::size_t kMaxDiagnostics = 3000;
// Each line at most this long, so that one enormous line (a binary file quoted by the compiler)
// does not take the whole budget from the errors after it.
constexpr std::size_t kMaxDiagnosticLine = 400;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string abi_header() {
  const std::string text = read_file(std::string(KBENCH_INCLUDE_DIR) + "/kbench/kernel.h");
  return text.empty() ? "(include/kbench/kernel.h could not be read)" : text;
}

std::string truncated(const std::string& text, std::size_t limit) {
  std::string clipped;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    clipped += clip_line(line, kMaxDiagnosticLine) + "\n";
  if (!text.ends_with('\n') && !clipped.empty()) clipped.pop_back();
  if (clipped.size() <= limit) return clipped;
  return clipped.substr(0, limit) + "\n... (" + std::to_string(clipped.size() - limit) +
         " more bytes)";
}

}  // namespace

std::string system_prompt(const TaskDescription& task) {
  const Environment env = current_environment();
  std::ostringstream s;
  s << "You are an expert performance engineer. You write one CPU kernel in C++ for kbench, a "
       "harness that compiles it, checks it against a reference on fresh random inputs, and times "
       "it against a strong library baseline.\n\n"
    << "Target machine: " << env.cpu_model << " (context target " << task.target << ")\n"
    << "ISA: " << env.cpu_flags << "\n"
    << "Threads: " << task.threads << " (cfg->num_threads; the process is pinned to them)\n"
    << "Compiled as: " << candidate_command_line() << "\n"
    << "Libraries you may use: OpenBLAS (cblas.h), oneDNN (oneapi/dnnl/dnnl.hpp), Highway "
       "(hwy/highway.h), OpenMP, x86 intrinsics (immintrin.h). No files, no network, no processes: "
       "the harness rejects them.\n";
  if (!task.context_text.empty())
    s << "\n# Reference material for this target\n\n" << task.context_text << "\n";
  return s.str();
}

std::string task_prompt(const TaskDescription& task) {
  const Workload& w = *task.workload;
  const Problem p = w.problem(task.size);
  std::ostringstream s;
  s << "# Task: " << w.name << "\n" << w.summary << "\n";
  if (const std::string_view spec = spec_text(w); !spec.empty())
    s << "\n## The operator (as kbench's reference states it)\n```\n" << spec << "```\n";
  if (!w.scaffold.empty())
    s << "\n## A naive, correct implementation (the semantics in code; make it fast)\n```cpp\n"
      << w.scaffold << "```\n";
  s << "\n## Tensors at the evaluated size (" << size_name(task.size) << "), in call order\n";
  for (std::size_t i = 0; i < p.inputs.size(); ++i)
    s << "- inputs[" << i << "]: " << p.inputs[i].tensor.name << " "
      << dtype_name(p.inputs[i].tensor.dtype) << p.inputs[i].tensor.shape_string() << "\n";
  for (std::size_t i = 0; i < p.outputs.size(); ++i)
    s << "- outputs[" << i << "]: " << p.outputs[i].name << " " << dtype_name(p.outputs[i].dtype)
      << p.outputs[i].shape_string() << "\n";
  if (!p.params.empty()) {
    s << "Scalar parameters in cfg->params:";
    for (const NamedParam& param : p.params) s << " " << param.name << "=" << param.value;
    s << "\n";
  }
  s << "Read shapes from the tensors: other sizes have other shapes.\n\n"
    << "## Correctness\nEvery output element within atol=" << significant_4(w.tolerance.atol)
    << " + rtol=" << significant_4(w.tolerance.rtol) << " * |reference|"
    << (w.tolerance.term_rtol > 0
            ? " + " + significant_4(w.tolerance.term_rtol) +
                  " * (the sum of |terms| the original rounds to bf16 and then sums into the "
                  "element)"
            : std::string())
    << ", and relative L2 error at most " << significant_4(w.tolerance.max_rel_l2)
    << ", against an fp32 reference. Write every output element.\n\n"
    << "## The ABI header (include it as \"kbench/kernel.h\")\n```c\n"
    << abi_header() << "```\n\n"
    << "## Reply format\nReply with one complete C++ source file in a single ```cpp fenced code "
       "block. It includes \"kbench/kernel.h\" and defines\n"
       "extern \"C\" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t "
       "num_inputs, kb_tensor* outputs, int32_t num_outputs)\nreturning 0 on success. Aim for "
       "the fastest correct kernel.\n";
  return s.str();
}

std::string feedback_text(const AgentSample& sample, const EvalResult* evaluation) {
  std::ostringstream s;
  s << "Verdict: " << sample.status;
  if (!sample.error.empty()) s << " (" << sample.error << ")";
  s << "\n";
  if (!evaluation) return s.str();
  const EvalResult& r = *evaluation;
  if (r.status == Status::kCompileError && !r.diagnostics.empty())
    s << "Compiler output:\n```\n" << truncated(r.diagnostics, kMaxDiagnostics) << "\n```\n";
  if (r.status == Status::kIncorrect) {
    s << "Max abs error " << significant_4(r.correctness.max_abs_err) << ", max rel error "
      << significant_4(r.correctness.max_rel_err) << ", relative L2 error "
      << significant_4(r.correctness.rel_l2_err) << ".\n";
    if (!r.correctness.detail.empty()) s << "First failing check: " << r.correctness.detail << "\n";
  }
  if ((r.status == Status::kRuntimeError || r.status == Status::kTimeout) && !r.diagnostics.empty())
    s << "Its output:\n```\n" << truncated(r.diagnostics, kMaxDiagnostics) << "\n```\n";
  if (r.status == Status::kCorrect && r.candidate && r.baseline) {
    s << "Median time " << significant_4(r.candidate->median_ms) << " ms against the baseline's "
      << significant_4(r.baseline->median_ms) << " ms";
    if (r.speedup) s << ": speedup " << significant_4(*r.speedup) << "x";
    if (r.speedup_ci95)
      s << " (95% CI " << significant_4(r.speedup_ci95->first) << "-"
        << significant_4(r.speedup_ci95->second) << ")";
    if (!r.speedup_verdict.empty()) s << ", " << r.speedup_verdict;
    s << ".\n";
    if (r.utilization && !r.utilization->bound.empty())
      s << "It reaches " << significant_4(r.utilization->gflops) << " GFLOP/s and "
        << significant_4(r.utilization->gbps)
        << " GB/s: " << significant_4(r.utilization->pct_roofline) << "% of the roofline ("
        << r.utilization->bound << "-bound at " << significant_4(r.utilization->peak_gflops)
        << " GFLOP/s " << r.utilization->peak_flops_kind << ", "
        << significant_4(r.utilization->peak_gbps) << " GB/s).\n";
    s << loop_feedback(r.analysis_json, sample.code);
  }
  return s.str();
}

ChatRequest first_request(const TaskDescription& task) {
  ChatRequest request;
  request.system = system_prompt(task);
  request.messages.push_back({"user", task_prompt(task)});
  return request;
}

ChatRequest refinement_request(const TaskDescription& task, const std::string& previous_code,
                               const std::string& previous_feedback,
                               const std::string& instruction) {
  ChatRequest request = first_request(task);
  // The previous attempt as the model's own turn, the feedback as the user's reply: the shape a
  // chat model is trained on, and one whose long prefix a server can cache across rounds.
  request.messages.push_back(
      {"assistant", previous_code.empty() ? "(no code)" : "```cpp\n" + previous_code + "\n```"});
  request.messages.push_back({"user", "The harness evaluated that kernel.\n" + previous_feedback +
                                          "\n" + instruction +
                                          "\nReply with the complete new source file in one "
                                          "```cpp block."});
  return request;
}

std::string prompt_hash(const ChatRequest& request) {
  std::string all = "system\n" + request.system;
  for (const ChatMessage& m : request.messages) all += "\n" + m.role + "\n" + m.content;
  return sha256_hex(all);
}

}  // namespace kbench::agents
