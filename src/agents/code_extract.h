// Takes the candidate source out of a model's reply: the code block that defines kb_run with the
// ABI's signature, or the reason there is none (a failed sample, "no_code").
#pragma once

#include <string>

namespace kbench::agents {

struct ExtractedCode {
  bool ok = false;
  std::string code;    // the source, with the ABI header's include added when it was missing
  std::string reason;  // one line when !ok
};

// Picks the last fenced block (```c, ```cpp, ```c++ or a bare fence) that mentions kb_run, since
// models often show a sketch before the final version; an unfenced reply that defines kb_run is
// taken whole. The block must define kb_run with extern "C" linkage (or be C) and the ABI's
// parameter list.
ExtractedCode extract_candidate(const std::string& reply);

}  // namespace kbench::agents
