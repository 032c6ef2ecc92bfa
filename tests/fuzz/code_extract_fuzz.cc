// libFuzzer target for the extraction of candidate code from a model's reply (agents/
// code_extract.h): any bytes, including a hostile model's, give code that defines kb_run with the
// ABI's signature or a one-line reason, and never a crash or a hang.
#include <cstdint>
#include <string>

#include "agents/code_extract.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string reply(reinterpret_cast<const char*>(data), size);
  const kbench::agents::ExtractedCode code = kbench::agents::extract_candidate(reply);
  if (code.ok) {
    if (code.code.find("kb_run") == std::string::npos) __builtin_trap();
  } else {
    kbench::fuzz::require_one_line(code.reason, "extract_candidate's reason");
  }
  return 0;
}
