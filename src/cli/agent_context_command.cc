// `kbench agent context`: lists a target's context artifact with its sizes and, with --write,
// regenerates this machine's hardware.md from its measured peaks.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "agents/context_artifact.h"
#include "cli/commands.h"
#include "cli/context.h"

namespace kbench::cli {
namespace fs = std::filesystem;

namespace {

// A model's tokenizer averages about four bytes of English or C++ per token: the estimate the
// listing prints, so the artifact can be sized against a model's context window.
constexpr std::size_t kBytesPerToken = 4;

void write_hardware_summary(const AgentContextOptions& options, const std::string& target,
                            const std::string& dir) {
  const std::string here = agents::detect_target();
  if (target != here)
    throw UsageError("--write records measured facts of this machine, whose target is '" + here +
                     "', not '" + target + "'; run it on a machine of that target");
  const int threads = threads_or_usage_error(options.threads);
  const PeakReport peaks = machine_peaks(threads).peaks;
  const fs::path path = fs::path(dir) / target / "hardware.md";
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  // Written beside and renamed over, so a failed write never leaves half a summary behind.
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << agents::hardware_summary_markdown(peaks, target);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot write " + path.string() + ": " + ec.message());
  std::printf("wrote %s\n", path.string().c_str());
}

}  // namespace

int agent_context_command(const AgentContextOptions& options) {
  const std::string target = options.target.empty() ? agents::detect_target() : options.target;
  const auto& known = agents::context_targets();
  if (std::find(known.begin(), known.end(), target) == known.end()) {
    std::string names;
    for (const std::string& t : known) names += (names.empty() ? "" : ", ") + t;
    throw UsageError("unknown context target '" + target + "' (known: " + names + ")");
  }
  const std::string dir =
      options.context_dir.empty() ? agents::default_context_dir() : options.context_dir;
  if (options.write) write_hardware_summary(options, target, dir);

  agents::ContextArtifact artifact;
  try {
    artifact = agents::load_context(dir, target);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());  // a wrong --context-dir or an incomplete artifact
  }
  std::printf("context %s (%s)\n", artifact.target.c_str(), artifact.root.c_str());
  std::size_t width = 0;
  for (const agents::ContextFile& f : artifact.files) width = std::max(width, f.name.size());
  for (const agents::ContextFile& f : artifact.files)
    std::printf("  %-*s %8zu bytes\n", static_cast<int>(width), f.name.c_str(), f.text.size());
  const std::size_t total = artifact.bytes();
  std::printf("total %zu bytes (~%zu tokens); menu %zu entries; %zu examples\n", total,
              total / kBytesPerToken, agents::optimization_menu(artifact).size(),
              agents::example_sources(artifact).size());
  return 0;
}

}  // namespace kbench::cli
