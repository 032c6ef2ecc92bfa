// libFuzzer target for the XLA:CPU peer's timings file (cli/xla_times.h), which `kbench run
// --markdown --xla FILE` reads: any bytes must give a table or a std::runtime_error with a one-line
// message.
#include <cstdint>
#include <stdexcept>

#include "cli/xla_times.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kbench::fuzz::MemoryFile file;
  file.assign(data, size);
  try {
    kbench::cli::read_xla_times(file.path(), "cpu");
  } catch (const std::runtime_error& e) {
    kbench::fuzz::require_one_line(e.what(), "read_xla_times' error");
  }
  return 0;
}
