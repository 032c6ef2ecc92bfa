// Parsing the declared search space out of an expert's source, and applying a point of it.
#include "experts/expert.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kbench::experts {
namespace {

std::string trimmed(const std::string& text) {
  const std::size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

bool parse_integer(const std::string& text, long long& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && end == text.c_str() + text.size();
}

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

std::string default_experts_dir() {
  if (const char* dir = std::getenv("KBENCH_EXPERTS_DIR"); dir && *dir) return dir;
  return KBENCH_EXPERTS_DIR;
}

std::vector<TunableParam> parse_tunables(const std::string& source, const std::string& path) {
  std::vector<TunableParam> params;
  std::set<std::string> names;
  std::istringstream lines(source);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const std::string text = trimmed(line);
    const std::string marker = "// tune:";
    if (text.rfind(marker, 0) != 0) continue;
    const auto fail = [&](const std::string& why) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + why +
                               " (expected `// tune: NAME = v1 v2 ... (default v)`)");
    };
    const std::string body = text.substr(marker.size());
    const std::size_t equals = body.find('=');
    const std::size_t open = body.find("(default ");
    const std::size_t close = body.rfind(')');
    if (equals == std::string::npos || open == std::string::npos || close == std::string::npos ||
        close < open || open < equals)
      fail("malformed tunable");
    TunableParam p;
    p.name = trimmed(body.substr(0, equals));
    if (!is_identifier(p.name)) fail("'" + p.name + "' is not a macro name");
    if (!names.insert(p.name).second) fail(p.name + " is declared twice");
    std::istringstream values(body.substr(equals + 1, open - equals - 1));
    for (std::string v; values >> v;) {
      long long value = 0;
      if (!parse_integer(v, value)) fail("'" + v + "' is not an integer");
      p.values.push_back(value);
    }
    if (p.values.empty()) fail(p.name + " has no values");
    const std::string default_text = trimmed(body.substr(open + 9, close - open - 9));
    if (!parse_integer(default_text, p.default_value)) fail("default '" + default_text + "'");
    if (std::find(p.values.begin(), p.values.end(), p.default_value) == p.values.end())
      fail("the default of " + p.name + " is not one of its values");
    params.push_back(std::move(p));
  }
  return params;
}

std::optional<ExpertKernel> find_expert(const std::string& experts_dir, const Workload& workload) {
  const std::filesystem::path path =
      std::filesystem::path(experts_dir) / (std::string(workload.name) + ".cpp");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw std::runtime_error("cannot read expert " + path.string());
  ExpertKernel expert;
  expert.workload = std::string(workload.name);
  expert.path = path.string();
  expert.source = text.str();
  expert.params = parse_tunables(expert.source, expert.path);
  return expert;
}

Config default_config(const ExpertKernel& expert) {
  Config config;
  for (const TunableParam& p : expert.params) config[p.name] = p.default_value;
  return config;
}

void validate_config(const ExpertKernel& expert, const Config& config) {
  for (const auto& [name, value] : config) {
    const auto it = std::find_if(expert.params.begin(), expert.params.end(),
                                 [&](const TunableParam& p) { return p.name == name; });
    if (it == expert.params.end())
      throw std::invalid_argument(expert.workload + "'s expert has no parameter " + name);
    if (std::find(it->values.begin(), it->values.end(), value) == it->values.end())
      throw std::invalid_argument(name + "=" + std::to_string(value) + " is outside " +
                                  expert.workload + "'s declared space");
  }
  for (const TunableParam& p : expert.params)
    if (!config.count(p.name)) throw std::invalid_argument("the configuration misses " + p.name);
}

std::vector<Config> full_grid(const ExpertKernel& expert) {
  std::vector<Config> grid = {Config{}};
  for (const TunableParam& p : expert.params) {
    std::vector<Config> next;
    for (const Config& partial : grid)
      for (long long value : p.values) {
        Config c = partial;
        c[p.name] = value;
        next.push_back(std::move(c));
      }
    grid = std::move(next);
  }
  const Config defaults = default_config(expert);
  const auto it = std::find(grid.begin(), grid.end(), defaults);
  if (it != grid.end()) std::rotate(grid.begin(), it, it + 1);
  return grid;
}

std::string configured_source(const ExpertKernel& expert, const Config& config) {
  validate_config(expert, config);
  std::string out = "// kbench tune: " + config_text(config) + "\n";
  for (const auto& [name, value] : config)
    out += "#define " + name + " " + std::to_string(value) + "\n";
  // Keeps the expert's own line numbers in diagnostics.
  out += "#line 1 \"" + std::filesystem::path(expert.path).filename().string() + "\"\n";
  return out + expert.source;
}

std::string config_text(const Config& config) {
  std::string text;
  for (const auto& [name, value] : config)
    text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return text;
}

}  // namespace kbench::experts
