// Reply -> candidate source. Models wrap code in fences of many spellings, show sketches before the
// final version, and rename or retype parameters; what matters is that the block defines kb_run
// with the ABI's parameter types, which this checks without compiling.
#include "agents/code_extract.h"

#include <cctype>
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

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// "const kb_tensor *in" -> "const kb_tensor*"; "kb_config const* cfg" -> "const kb_config*".
// Hand-rolled rather than std::regex: replies are untrusted and can be long, and libstdc++'s regex
// recurses per character.
std::string parameter_type(const std::string& param) {
  // Tokens: words and '*'.
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < param.size();) {
    if (param[i] == '*') {
      tokens.emplace_back("*");
      ++i;
    } else if (is_word_char(param[i])) {
      std::size_t j = i;
      while (j < param.size() && is_word_char(param[j])) ++j;
      tokens.push_back(param.substr(i, j - i));
      i = j;
    } else if (std::isspace(static_cast<unsigned char>(param[i]))) {
      ++i;
    } else {
      tokens.push_back(std::string(1, param[i]));  // anything else stays and fails the match
      ++i;
    }
  }
  // A trailing word after a type is the parameter's name ("int32_t n", "kb_tensor* out").
  const auto is_type_word = [](const std::string& t) { return t == "const" || t == "signed"; };
  if (tokens.size() >= 2 && is_word_char(tokens.back()[0]) && !is_type_word(tokens.back()))
    tokens.pop_back();
  bool is_const = false, pointer = false;
  std::string base;
  for (const std::string& t : tokens) {
    if (t == "const") {
      is_const = true;
    } else if (t == "*") {
      if (pointer) return "?";  // double pointers are not the ABI's
      pointer = true;
    } else if (t == "signed") {
      continue;
    } else {
      if (!base.empty() || pointer) return "?";
      base = t;
    }
  }
  if (base == "int") base = "int32_t";
  return (is_const ? "const " : "") + base + (pointer ? "*" : "");
}

// Empty when `code` defines kb_run with the ABI's parameters; else why not.
std::string signature_problem(const std::string& code) {
  // The first definition: "int" "kb_run" "(" params ")" "{", whitespace anywhere between.
  std::string params;
  bool defined = false;
  for (std::size_t at = code.find("kb_run"); at != std::string::npos && !defined;
       at = code.find("kb_run", at + 1)) {
    std::size_t before = at;
    while (before > 0 && std::isspace(static_cast<unsigned char>(code[before - 1]))) --before;
    if (before == at || before < 3 || code.compare(before - 3, 3, "int") != 0 ||
        (before > 3 && is_word_char(code[before - 4])))
      continue;
    std::size_t i = at + 6;
    if (i < code.size() && is_word_char(code[i])) continue;  // kb_run_inner
    while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
    if (i >= code.size() || code[i] != '(') continue;
    const std::size_t close = code.find(')', i);
    if (close == std::string::npos) continue;
    std::size_t j = close + 1;
    while (j < code.size() && std::isspace(static_cast<unsigned char>(code[j]))) ++j;
    if (j >= code.size() || code[j] != '{') continue;
    params = code.substr(i + 1, close - i - 1);
    defined = true;
  }
  if (!defined) return "the code defines no `int kb_run(...) {` function";
  const std::vector<std::string> expected = {"const kb_config*", "const kb_tensor*", "int32_t",
                                             "kb_tensor*", "int32_t"};
  std::vector<std::string> got;
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
