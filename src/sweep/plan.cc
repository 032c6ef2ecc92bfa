#include "sweep/plan.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

namespace kbench::sweep {
namespace {

constexpr int kPlanFormat = 1;

std::filesystem::path plan_file(const std::filesystem::path& dir) {
  return dir / "sweep.json";
}

}  // namespace

Plan read_plan(const std::filesystem::path& dir) {
  const std::filesystem::path file = plan_file(dir);
  std::ifstream in(file);
  if (!in) throw SweepError("'" + dir.string() + "' is not a sweep directory (no sweep.json)");
  std::stringstream text;
  text << in.rdbuf();
  try {
    const nlohmann::json json = nlohmann::json::parse(text.str());
    if (json.at("format").get<int>() != kPlanFormat)
      throw SweepError("'" + file.string() + "': sweep format " +
                       std::to_string(json.at("format").get<int>()) + ", this kbench reads " +
                       std::to_string(kPlanFormat));
    Plan plan;
    plan.max_attempts = json.at("max_attempts").get<int>();
    for (const nlohmann::json& cell : json.at("cells"))
      plan.cells.push_back(
          {cell.at("name").get<std::string>(), cell.at("args").get<std::vector<std::string>>()});
    return plan;
  } catch (const nlohmann::json::exception& e) {
    throw SweepError("'" + file.string() + "' is not a sweep plan: " + e.what());
  }
}

void write_plan(const std::filesystem::path& dir, const Plan& plan) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw SweepError("cannot create '" + dir.string() + "': " + ec.message());
  nlohmann::json cells = nlohmann::json::array();
  for (const Cell& cell : plan.cells) cells.push_back({{"name", cell.name}, {"args", cell.args}});
  const nlohmann::json json = {
      {"format", kPlanFormat}, {"max_attempts", plan.max_attempts}, {"cells", cells}};
  const std::filesystem::path file = plan_file(dir), partial = file.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << json.dump(2) << '\n';
    if (!out.flush()) throw SweepError("cannot write '" + partial.string() + "'");
  }
  std::filesystem::rename(partial, file, ec);
  if (ec) throw SweepError("cannot write '" + file.string() + "': " + ec.message());
}

bool same_cells(const Plan& a, const Plan& b) {
  if (a.cells.size() != b.cells.size()) return false;
  for (std::size_t i = 0; i < a.cells.size(); ++i)
    if (a.cells[i].name != b.cells[i].name || a.cells[i].args != b.cells[i].args) return false;
  return true;
}

}  // namespace kbench::sweep
