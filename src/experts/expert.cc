// Parsing the declared search space out of an expert's source, and applying a point of it.
#include "experts/expert.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include "core/amx.h"
#include "core/sha256.h"

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

std::string read_whole(const std::filesystem::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in.is_open()) text << in.rdbuf();
  if (!in.is_open() || in.bad())
    throw std::runtime_error("cannot read " + what + " " + path.string());
  return text.str();
}

// `#include "name"` of a file inside the experts directory: nullopt for any other line.
std::optional<std::string> quoted_include(const std::string& line) {
  std::string text = trimmed(line);
  if (text.rfind("#", 0) != 0) return std::nullopt;
  text = trimmed(text.substr(1));
  if (text.rfind("include", 0) != 0) return std::nullopt;
  text = trimmed(text.substr(7));
  if (text.size() < 2 || text.front() != '"') return std::nullopt;
  const std::size_t close = text.find('"', 1);
  if (close == std::string::npos) return std::nullopt;
  return text.substr(1, close - 1);
}

// `source` (the file `path`) with each `#include "..."` of a header under `root` replaced by the
// header's text, recursively and once per header, between #line markers that keep diagnostics
// pointing at the real files. "kbench/kernel.h" stays an include: the candidate command provides
// it. A quoted include that names anything outside `root` is an error, so an expert can never pull
// a file of the checkout into a candidate unseen.
std::string expand_includes(const std::string& source, const std::filesystem::path& path,
                            const std::filesystem::path& root, std::set<std::string>& seen) {
  std::string out;
  std::istringstream lines(source);
  int number = 0;
  const std::string file = std::filesystem::relative(path, root).generic_string();
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (trimmed(line) == "#pragma once") {
      out += "\n";
      continue;
    }
    const std::optional<std::string> name = quoted_include(line);
    if (!name || *name == "kbench/kernel.h") {
      out += line + "\n";
      continue;
    }
    const std::filesystem::path header = (path.parent_path() / *name).lexically_normal();
    const std::string inside = header.lexically_relative(root).generic_string();
    if (inside.empty() || inside.rfind("..", 0) == 0)
      throw std::runtime_error(path.string() + ":" + std::to_string(number) + ": \"" + *name +
                               "\" is outside the experts directory " + root.string());
    if (seen.insert(inside).second) {
      out += "#line 1 \"" + inside + "\"\n";
      out += expand_includes(read_whole(header, "expert header"), header, root, seen);
    }
    out += "#line " + std::to_string(number + 1) + " \"" + file + "\"\n";
  }
  return out;
}

}  // namespace

std::string default_experts_dir() {
  if (const char* dir = std::getenv("KBENCH_EXPERTS_DIR"); dir && *dir) return dir;
  return KBENCH_EXPERTS_DIR;
}

namespace {

using Fail = std::function<void(const std::string&)>;

// Calls on_line(number, body, fail) for each line of `source` that starts, after blanks, with
// `marker`: body is the rest of the line, and fail(why) throws a runtime_error naming `path`, the
// line and the `expected` form.
void for_each_declaration(const std::string& source, const std::string& marker,
                          const std::string& path, const std::string& expected,
                          const std::function<void(int, std::string, const Fail&)>& on_line) {
  std::istringstream lines(source);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const std::string text = trimmed(line);
    if (text.rfind(marker, 0) != 0) continue;
    const Fail fail = [&](const std::string& why) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + why + " (expected `" +
                               expected + "`)");
    };
    on_line(number, text.substr(marker.size()), fail);
  }
}

}  // namespace

std::vector<TunableParam> parse_tunables(const std::string& source, const std::string& path) {
  std::vector<TunableParam> params;
  std::set<std::string> names;
  for_each_declaration(
      source, "// tune:", path, "// tune: NAME = v1 v2 ... (default v)",
      [&](int, std::string body, const Fail& fail) {
        std::vector<std::string> tags;
        if (!body.empty() && body.back() == ']') {
          const std::size_t open_tag = body.rfind('[');
          if (open_tag == std::string::npos) fail("unbalanced [paths]");
          std::istringstream names_in(body.substr(open_tag + 1, body.size() - open_tag - 2));
          for (std::string name; names_in >> name;) tags.push_back(name);
          if (tags.empty()) fail("an empty [paths] tag");
          body = trimmed(body.substr(0, open_tag));
        }
        const std::size_t equals = body.find('=');
        const std::size_t open = body.find("(default ");
        const std::size_t close = body.rfind(')');
        if (equals == std::string::npos || open == std::string::npos ||
            close == std::string::npos || close < open || open < equals || close + 1 != body.size())
          fail("malformed tunable");
        TunableParam p;
        p.paths = std::move(tags);
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
      });
  return params;
}

std::vector<std::string> parse_paths(const std::string& source, const std::string& path,
                                     const std::vector<TunableParam>& params) {
  const auto known = [](const std::string& name) {
    return std::find_if(std::begin(kExpertPaths), std::end(kExpertPaths),
                        [&](const char* p) { return name == p; }) != std::end(kExpertPaths);
  };
  std::vector<std::string> paths;
  int declared_at = 0;
  for_each_declaration(
      source, "// tune paths:", path, "// tune paths: amx avx512 avx2 scalar",
      [&](int number, const std::string& body, const Fail& fail) {
        if (declared_at != 0)
          fail("a second paths line (the first is line " + std::to_string(declared_at) + ")");
        declared_at = number;
        std::istringstream names(body);
        for (std::string name; names >> name;) {
          if (!known(name)) fail("unknown path '" + name + "'");
          if (std::find(paths.begin(), paths.end(), name) != paths.end())
            fail(name + " named twice");
          paths.push_back(name);
        }
        if (paths.empty()) fail("no paths");
      });
  for (const TunableParam& p : params)
    for (const std::string& tag : p.paths)
      if (std::find(paths.begin(), paths.end(), tag) == paths.end())
        throw std::runtime_error(path + ": " + p.name + " is tagged [" + tag +
                                 "], a path the expert's `// tune paths:` line does not declare");
  return paths;
}

bool machine_runs_path(const std::string& path) {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (path == "amx") return avx512 && cpu_has_amx_bf16() && request_amx_permission();
  if (path == "avx512") return avx512;
  if (path == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return path == "scalar";
}

std::string path_on_this_machine(const ExpertKernel& expert) {
  // kExpertPaths is least capable first: the last one declared and run here wins.
  std::string best;
  for (const char* p : kExpertPaths)
    if (std::find(expert.paths.begin(), expert.paths.end(), p) != expert.paths.end() &&
        machine_runs_path(p))
      best = p;
  return best;
}

std::filesystem::path expert_source_path(const std::string& experts_dir, const Workload& workload) {
  return std::filesystem::path(experts_dir) / (std::string(workload.name) + ".cpp");
}

std::optional<ExpertKernel> find_expert(const std::string& experts_dir, const Workload& workload) {
  const std::filesystem::path path = expert_source_path(experts_dir, workload);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  ExpertKernel expert;
  expert.workload = std::string(workload.name);
  expert.path = path.string();
  std::set<std::string> seen;
  const std::filesystem::path root = std::filesystem::absolute(experts_dir).lexically_normal();
  expert.source = expand_includes(read_whole(path, "expert"),
                                  std::filesystem::absolute(path).lexically_normal(), root, seen);
  expert.params = parse_tunables(expert.source, expert.path);
  expert.paths = parse_paths(expert.source, expert.path, expert.params);
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

std::vector<Config> full_grid(const ExpertKernel& expert, const std::string& path) {
  std::vector<Config> grid = {Config{}};
  for (const TunableParam& p : expert.params) {
    const bool read_here = path.empty() || p.paths.empty() ||
                           std::find(p.paths.begin(), p.paths.end(), path) != p.paths.end();
    const std::vector<long long> values =
        read_here ? p.values : std::vector<long long>{p.default_value};
    std::vector<Config> next;
    for (const Config& partial : grid)
      for (long long value : values) {
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

std::string write_configured_source(const ExpertKernel& expert, const Config& config,
                                    const std::string& cache_dir) {
  const std::string source = configured_source(expert, config);
  const std::filesystem::path dir = std::filesystem::path(cache_dir) / "experts";
  std::filesystem::create_directories(dir);
  // Named by its content and renamed into place whole: a concurrent kbench compiling the same
  // file never reads it half written.
  const std::filesystem::path path = dir / (sha256_hex(source) + ".cpp");
  const std::filesystem::path partial = path.string() + "." + std::to_string(getpid()) + ".tmp";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << source;
    if (!out.flush()) throw std::runtime_error("cannot write " + partial.string());
  }
  std::filesystem::rename(partial, path);
  return path.string();
}

std::string point_name(const ExpertKernel& expert, const Config& config) {
  return expert.path + " [" + config_text(config) + "]";
}

std::string config_text(const Config& config) {
  std::string text;
  for (const auto& [name, value] : config)
    text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return text;
}

}  // namespace kbench::experts
