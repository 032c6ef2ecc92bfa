// libFuzzer target for the /proc parsers (harness/schedstat.h). The kernel writes those files, not
// a candidate, so this guards against kernels formatting them differently: any text must parse or
// be refused without a crash, and a schedstat line parse_schedstat() accepts must read back the
// same when printed again.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "harness/schedstat.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kbench::parse_proc_stat(text);
  if (const auto s = kbench::parse_schedstat(text)) {
    const std::string printed =
        std::to_string(s->run_ns) + " " + std::to_string(s->wait_ns) + " 1\n";
    const auto again = kbench::parse_schedstat(printed);
    kbench::fuzz::require(again && again->run_ns == s->run_ns && again->wait_ns == s->wait_ns,
                          "parse_schedstat() does not read its own numbers back");
  }
  return 0;
}
