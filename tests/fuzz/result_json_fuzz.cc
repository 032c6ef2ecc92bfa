// libFuzzer target for stored result records (store/result_json.h): the full_json column of a
// results database, which anyone who can write the file can shape. As ResultStore::recent() does,
// the bytes are parsed as JSON and read by eval_result_from_json(), which must succeed or throw
// std::invalid_argument, and what it reads must survive to_json() and a second reading unchanged.
// (The sinks that render it are left out: Clang 14 cannot compile store/sinks.cc, see
// CMakeLists.txt.)
#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "store/result_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kbench::fuzz::require;
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(data, data + size);
  } catch (const nlohmann::json::exception&) {
    return 0;  // not JSON: the store reports the row as unreadable
  }
  kbench::EvalResult result;
  try {
    result = kbench::eval_result_from_json(json);
  } catch (const std::invalid_argument&) {
    return 0;  // the documented refusal of a malformed record
  }

  // What the reader accepted, written and read again, must be written the same: nothing is lost or
  // changed after the first reading (which may drop what to_json() never writes).
  const std::string once = kbench::dump_json(kbench::to_json(result));
  const kbench::EvalResult again = kbench::eval_result_from_json(nlohmann::json::parse(once));
  const std::string twice = kbench::dump_json(kbench::to_json(again));
  require(once == twice, "to_json(eval_result_from_json(to_json(r))) differs from to_json(r):\n" +
                             once + "\n" + twice);
  return 0;
}
