// `kbench list`: the workloads kbench implements.
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/shared_options.h"
#include "workloads/registry.h"
#include "workloads/spec_text.h"

namespace kbench::cli {

int list_command(const ListOptions& options) {
  if (options.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const Workload* w : all_workloads()) {
      const Problem cpu = w->problem(Size::kCpu);
      nlohmann::json inputs = nlohmann::json::array();
      for (const InputSpec& in : cpu.inputs)
        inputs.push_back({{"name", in.tensor.name},
                          {"dtype", dtype_name(in.tensor.dtype)},
                          {"shape_cpu", in.tensor.shape}});
      all.push_back({{"id", w->id()},
                     {"name", w->name},
                     {"group", group_name(w->group())},
                     {"source_model", w->source_model()},
                     {"summary", w->summary},
                     {"operator", spec_text(*w)},
                     {"inputs", inputs},
                     {"flops_cpu", cpu.flops},
                     {"min_bytes_cpu", cpu.min_bytes}});
    }
    std::cout << all.dump(2) << "\n";
    return 0;
  }
  std::printf("%-5s %-55s %-15s %12s  %s\n", "id", "name", "group", "GFLOP(cpu)", "summary");
  for (const Workload* w : all_workloads()) {
    const Problem cpu = w->problem(Size::kCpu);
    std::printf("%-5s %-55s %-15s %12.3f  %s\n", std::string(w->id()).c_str(),
                std::string(w->name).c_str(), group_name(w->group()), cpu.flops * 1e-9,
                std::string(w->summary).c_str());
  }
  return 0;
}

Subcommand add_list_command(CLI::App& app) {
  auto list = std::make_shared<ListOptions>();
  auto* list_cmd = app.add_subcommand("list", "List the workloads");
  add_json_flag(list_cmd, list->json, "a JSON array");
  return {list_cmd, [list] { return list_command(*list); }};
}

}  // namespace kbench::cli
