// Reply -> candidate source. Models wrap code in fences of many spellings, show sketches before the
// final version, and rename or retype parameters; what matters is that the block defines kb_run
// with the ABI's parameter types, which this checks without compiling.
#include "agents/code_extract.h"

#include <regex>
#include <vector>

namespace kbench::agents {
namespace {

struct Block {
  std::string language;
  std::string body;
};

std::vector<Block> fenced_blocks(const std::string& reply) {
  std::vector<Block> blocks;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = reply.find("```", pos);
    if (open == std::string::npos) break;
    const std::size_t line_end = reply.find('\n', open);
    if (line_end == std::string::npos) break;
    const std::size_t close = reply.find("```", line_end + 1);
    Block block;
    block.language = reply.substr(open + 3, line_end - open - 3);
    // An unterminated last fence (the reply hit max_tokens) still yields what was written.
    block.body = reply.substr(
        line_end + 1, close == std::string::npos ? std::string::npos : close - line_end - 1);
    blocks.push_back(std::move(block));
    if (close == std::string::npos) break;
    pos = close + 3;
  }
  return blocks;
}

std::string collapse_spaces(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (!out.empty() && out.front() == ' ') out.erase(0, 1);
  return out;
}

// "const kb_tensor *in" -> "const kb_tensor*"; "kb_config const* cfg" -> "const kb_config*".
std::string parameter_type(std::string param) {
  param = collapse_spaces(param);
  static const std::regex trailing_name(R"(\s*\b[A-Za-z_]\w*$)");
  static const std::regex pointer_space(R"(\s*\*\s*)");
  static const std::regex east_const(R"(^(\w+) const\*$)");
  std::string type = param;
  // Strip the parameter's name when there is one (a type alone, "int32_t", keeps its last word).
  const std::string without_name = std::regex_replace(param, trailing_name, "");
  if (!without_name.empty() && without_name != "const") type = without_name;
  type = std::regex_replace(type, pointer_space, "* ");
  type = collapse_spaces(type);
  type = std::regex_replace(type, east_const, "const $1*");
  if (type == "int" || type == "signed int") type = "int32_t";
  return type;
}

// Empty when `code` defines kb_run with the ABI's parameters; else why not.
std::string signature_problem(const std::string& code) {
  static const std::regex definition(R"(\bint\s+kb_run\s*\(([^)]*)\)\s*\{)");
  std::smatch match;
  if (!std::regex_search(code, match, definition))
    return "the code defines no `int kb_run(...) {` function";
  const std::vector<std::string> expected = {"const kb_config*", "const kb_tensor*", "int32_t",
                                             "kb_tensor*", "int32_t"};
  std::vector<std::string> got;
  std::string params = match[1].str();
  std::size_t start = 0;
  while (start <= params.size()) {
    const std::size_t comma = params.find(',', start);
    got.push_back(parameter_type(params.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (got != expected) {
    std::string list;
    for (const std::string& g : got) list += (list.empty() ? "" : ", ") + g;
    return "kb_run has parameters (" + list +
           "); the ABI's are (const kb_config*, const kb_tensor*, int32_t, kb_tensor*, int32_t)";
  }
  return "";
}

}  // namespace

ExtractedCode extract_candidate(const std::string& reply) {
  ExtractedCode out;
  std::string code;
  const std::vector<Block> blocks = fenced_blocks(reply);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
    if (it->body.find("kb_run") != std::string::npos) {
      code = it->body;
      break;
    }
  if (code.empty() && blocks.empty() && reply.find("kb_run") != std::string::npos) code = reply;
  if (code.empty()) {
    out.reason = blocks.empty() ? "the reply holds no code block"
                                : "no code block in the reply mentions kb_run";
    return out;
  }
  const std::string problem = signature_problem(code);
  if (!problem.empty()) {
    out.reason = problem;
    return out;
  }
  // The header declares kb_run extern "C": with it included, a plain definition gets C linkage.
  if (code.find("kbench/kernel.h") == std::string::npos)
    code = "#include \"kbench/kernel.h\"\n" + code;
  out.ok = true;
  out.code = std::move(code);
  return out;
}

}  // namespace kbench::agents
