// Candidate sources for the agents' tests, built from the repository's examples.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace kbench::agents::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `source` with its kb_run renamed and wrapped: `prologue` (C++ statements that may return early,
// with the parameters named c, i, ni, o, no) runs before the original body.
inline std::string wrap_kb_run(std::string source, const std::string& includes,
                               const std::string& prologue) {
  const std::string entry = "extern \"C\" int kb_run(";
  source.replace(source.find(entry), entry.size(),
                 "static int kb_run_inner(const kb_config*, const kb_tensor*, int32_t, kb_tensor*, "
                 "int32_t);\nextern \"C\" int kb_run(const kb_config* c, const kb_tensor* i, "
                 "int32_t ni, kb_tensor* o, int32_t no) {\n" +
                     prologue +
                     "\n  return kb_run_inner(c, i, ni, o, no);\n}\nstatic int kb_run_inner(");
  return includes + source;
}

}  // namespace kbench::agents::testing
