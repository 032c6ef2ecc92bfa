// The text sinks for EvalResult: an aligned table for people, a JSON array and RFC 4180 CSV for
// scripts, and the verdict block that `kbench eval` prints. The SQLite sink is ResultStore.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "core/terminal_text.h"
#include "harness/eval_result.h"
#include "store/result_json.h"

namespace kbench {

enum class Format { kTable, kJson, kCsv };

// "table", "json" or "csv" (as the CLI spells them); nullopt otherwise.
std::optional<Format> parse_format(std::string_view name);

// Writes `results` in order:
//   kTable: created_at, kind, workload, size, threads, status, speedup [95% CI], candidate and
//   baseline
//           median ms, GFLOP/s, % of peak FLOP/s, GB/s, % of peak bandwidth; "-" where not
//           measured.
//   kJson:  an array of to_json(result, json_options), indented, invalid UTF-8 replaced.
//   kCsv:   a header row, then one row per result with the summary fields (no samples, source or
//           diagnostics); empty fields where not measured; CRLF line ends as RFC 4180 specifies.
void write_results(std::ostream& out, std::span<const EvalResult> results, Format format,
                   const JsonOptions& json_options = {});

// The human-readable outcome of one evaluation: status line, error and failing check, correctness
// numbers, candidate and baseline timing with p25/p75, speedup with its CI, utilization, and the
// diagnostics when the candidate did not compile (their first lines) or crashed (their last), all
// of it passed through terminal_safe.
void write_verdict(std::ostream& out, const EvalResult& result);

// One CSV field: quoted when it contains a comma, double quote, CR or LF, with quotes doubled.
std::string csv_field(std::string_view text);

}  // namespace kbench
