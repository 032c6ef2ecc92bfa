// libFuzzer target for stored result records (store/result_json.h): the full_json column of a
// results database, which anyone who can write the file can shape. As ResultStore::recent() does,
// the bytes are parsed as JSON and read by eval_result_from_json(), which must succeed or throw
// std::invalid_argument; integers must be read exactly, and what it reads must survive to_json()
// and a second reading unchanged.
// (The sinks that render it are left out: Clang 14 cannot compile store/sinks.cc, see
// CMakeLists.txt.)
#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "store/result_json.h"
#include "store/sinks.h"

namespace {

using kbench::fuzz::require;
using nlohmann::json;

// Integers are read exactly or the record is refused: a reader that wrapped 4294967297 to 1 would
// show a record other than the one stored.
void require_integers_kept(const json& in, const json& out, const std::string& where,
                           std::initializer_list<const char*> keys) {
  if (!in.is_object() || !out.is_object()) return;
  for (const char* key : keys) {
    const auto given = in.find(key);
    if (given == in.end() || !given->is_number_integer()) continue;
    const auto kept = out.find(key);
    require(kept != out.end() && *kept == *given,
            where + key + " " + given->dump() + " was read as " +
                (kept == out.end() ? "nothing" : kept->dump()));
  }
  for (const char* key : {"seeds", "disturbed"}) {
    const auto given = in.find(key);
    const auto kept = out.find(key);
    if (given == in.end() || !given->is_array() || kept == out.end()) continue;
    for (std::size_t i = 0; i < given->size() && i < kept->size(); ++i) {
      if ((*given)[i].is_number_integer())
        require((*kept)[i] == (*given)[i], where + key + "[" + std::to_string(i) + "] " +
                                               (*given)[i].dump() + " was read as " +
                                               (*kept)[i].dump());
    }
  }
}

void require_integers_kept(const json& in, const json& out) {
  require_integers_kept(in, out, "", {"threads", "warmup"});
  if (!in.is_object()) return;
  const auto nested = [&](const char* object, std::initializer_list<const char*> keys) {
    if (in.contains(object) && out.contains(object))
      require_integers_kept(in[object], out[object], std::string(object) + ".", keys);
  };
  nested("correctness", {"trials"});
  nested("candidate", {"iters", "used"});
  nested("baseline", {"iters", "used"});
  nested("noise", {"calls", "disturbed_calls", "candidate_disturbed", "baseline_disturbed",
                   "unadjustable_calls", "clean_pairs", "min_iters", "max_iters"});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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

  require_integers_kept(json, kbench::to_json(result));

  // What the reader accepted, written and read again, must be written the same: nothing is lost or
  // changed after the first reading (which may drop what to_json() never writes).
  const std::string once = kbench::dump_json(kbench::to_json(result));
  const kbench::EvalResult again = kbench::eval_result_from_json(nlohmann::json::parse(once));
  const std::string twice = kbench::dump_json(kbench::to_json(again));
  require(once == twice, "to_json(eval_result_from_json(to_json(r))) differs from to_json(r):\n" +
                             once + "\n" + twice);

  // Every sink renders whatever the reader accepted (`kbench results`, `kbench eval`'s verdict).
  std::ostringstream rendered;
  const kbench::EvalResult records[] = {result};
  for (kbench::Format format :
       {kbench::Format::kTable, kbench::Format::kJson, kbench::Format::kCsv})
    kbench::write_results(rendered, records, format);
  kbench::write_verdict(rendered, result);
  return 0;
}
