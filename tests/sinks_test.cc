// Tests of the text sinks: CSV quoting that parses back, JSON that stays valid with non-finite
// metrics, an aligned table, and the eval verdict block.
#include "store/sinks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace kbench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

EvalResult correct_result() {
  EvalResult r;
  r.kind = "eval";
  r.workload = "8p_GEMM";
  r.size = "cpu";
  r.threads = 2;
  r.status = Status::kCorrect;
  r.candidate_path = "/tmp/gemm.cc";
  r.candidate_hash = std::string(4, '0') + "123456789abcdef" + std::string(45, 'f');  // sha256 hex
  r.correctness = {true, 3, {1, 2, 3}, 1.5e-3, 2.5e-3, 1e-4, ""};
  r.candidate = TimingSummary{1.25, 1.2, 1.3, 1.1, 1.26, 50, {1.25, 1.2, 1.3}};
  r.baseline = TimingSummary{2.5, 2.4, 2.6, 2.3, 2.51, 50, {2.5, 2.4, 2.6}};
  r.speedup = 2.0;
  r.speedup_ci95 = std::pair(1.9, 2.1);
  r.utilization = Utilization{123.4, 45.6, 12.3, 5.6, 270.0, 220.0, "fp32_fma"};
  r.warmup = 5;
  r.wall_s = 12.5;
  r.created_at = "2024-05-01T12:00:00Z";
  return r;
}

EvalResult failed_result() {
  EvalResult r;
  r.kind = "eval";
  r.workload = "3p_Softmax";
  r.size = "smoke";
  r.status = Status::kCompileError;
  r.error = "compile failed: expected ';', got \"}\"";
  r.diagnostics = "gemm.cc:1:2: error: expected ';'\n1 error generated.";
  r.candidate_path = "/tmp/dir,with,commas/a \"b\".cc";
  r.created_at = "2024-05-01T12:01:00Z";
  return r;
}

// A strict RFC 4180 reader, so the test checks what a CSV consumer sees rather than string details.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      EXPECT_TRUE(field.empty()) << "quote inside an unquoted field at byte " << i;
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      EXPECT_NE(c, '\n') << "bare LF outside quotes at byte " << i;
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quoted field";
  EXPECT_TRUE(rows.back().empty() && field.empty()) << "last record lacks its CRLF";
  rows.pop_back();
  return rows;
}

std::string render(const std::vector<EvalResult>& results, Format format) {
  std::ostringstream out;
  write_results(out, results, format);
  return out.str();
}

TEST(CsvFieldTest, QuotesOnlyWhenNeededAndDoublesQuotes) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("line1\nline2"), "\"line1\nline2\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_field("\""), "\"\"\"\"");
}

TEST(CsvSinkTest, HostileFieldsParseBackExactly) {
  EvalResult hostile = failed_result();
  hostile.error = "a,b \"quoted\"\nsecond line\r\nthird";
  hostile.correctness.detail = "worst at c[1,2]: 3.5 vs \"4\"";
  const std::string text = render({correct_result(), hostile}, Format::kCsv);
  const auto rows = parse_csv(text);
  ASSERT_EQ(rows.size(), 3u);
  const std::vector<std::string>& header = rows[0];
  for (const auto& row : rows) ASSERT_EQ(row.size(), header.size());

  const auto column = [&](const std::string& name) {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return i;
    }
    ADD_FAILURE() << "no column " << name;
    return std::size_t{0};
  };
  EXPECT_EQ(rows[2][column("error")], hostile.error);
  EXPECT_EQ(rows[2][column("detail")], hostile.correctness.detail);
  EXPECT_EQ(rows[2][column("candidate_path")], hostile.candidate_path);
  EXPECT_EQ(rows[2][column("status")], "compile_error");
  EXPECT_EQ(rows[2][column("speedup")], "");      // not measured: empty, not 0
  EXPECT_EQ(rows[2][column("max_abs_err")], "");  // no output compared: empty, not 0
  EXPECT_EQ(rows[2][column("rel_l2_err")], "");
  EXPECT_EQ(rows[1][column("speedup")], "2");
  EXPECT_EQ(rows[1][column("candidate_median_ms")], "1.25");
  EXPECT_EQ(rows[1][column("speedup_ci_lo")], "1.9");
  EXPECT_EQ(rows[1][column("gflops")], "123.4");
}

TEST(CsvSinkTest, EmptyListIsHeaderOnly) {
  const auto rows = parse_csv(render({}, Format::kCsv));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "id");
  EXPECT_EQ(rows[0][1], "created_at");
}

TEST(JsonSinkTest, ValidWithNaNAndInfinityMetrics) {
  EvalResult r = correct_result();
  r.correctness.max_abs_err = kNaN;
  r.correctness.max_rel_err = kInf;
  r.speedup = kNaN;
  r.speedup_ci95 = std::pair(-kInf, kInf);
  r.utilization->gflops = kNaN;
  r.candidate->samples_ms = {kNaN, 1.0};
  r.diagnostics = "invalid UTF-8 from the candidate: \xff\xfe";
  const std::string text = render({r, failed_result()}, Format::kJson);

  const nlohmann::json parsed = nlohmann::json::parse(text);  // throws on invalid JSON
  ASSERT_TRUE(parsed.is_array());
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0]["correctness"]["max_abs_err"], "nan");
  EXPECT_EQ(parsed[0]["correctness"]["max_rel_err"], "inf");
  EXPECT_EQ(parsed[0]["speedup_ci95"], nlohmann::json::array({"-inf", "inf"}));
  EXPECT_EQ(parsed[0]["gflops"], "nan");
  EXPECT_EQ(parsed[0]["workload"], "8p_GEMM");
  EXPECT_TRUE(parsed[1]["candidate"].is_null());
  EXPECT_TRUE(parsed[1]["gflops"].is_null());
  EXPECT_EQ(parsed[1]["status"], "compile_error");
  // No output was compared: the errors are null, not a perfect 0, and read back as before.
  for (const char* metric : {"max_abs_err", "max_rel_err", "rel_l2_err"})
    EXPECT_TRUE(parsed[1]["correctness"][metric].is_null()) << metric;
  EXPECT_EQ(eval_result_from_json(parsed[1]).correctness.max_abs_err, 0.0);

  const EvalResult back = eval_result_from_json(parsed[0]);
  EXPECT_TRUE(std::isnan(back.correctness.max_abs_err));
  EXPECT_TRUE(std::isnan(*back.speedup));
  EXPECT_TRUE(std::isnan(back.candidate->samples_ms[0]));
}

TEST(JsonSinkTest, ExpertSummaryRoundTripsWithItsPairedBaselineAndReason) {
  EvalResult r = correct_result();
  r.kind = "run";
  ExpertSummary e;
  e.config = "KB_AMX_NC=672";
  e.status = Status::kCorrect;
  e.median_ms = 4.2;
  e.speedup = 4.96;
  e.speedup_ci95 = std::pair(4.84, 5.03);
  e.speedup_verdict = "unstable";
  e.unstable_reason = "the baseline took 20.8 ms beside the candidate and 15.23 ms alone";
  e.baseline_median_ms = 20.8;
  r.expert = e;
  const nlohmann::json parsed = nlohmann::json::parse(render({r}, Format::kJson));
  EXPECT_EQ(parsed[0]["expert"]["baseline_median_ms"], 20.8);
  EXPECT_EQ(parsed[0]["expert"]["unstable_reason"], e.unstable_reason);
  const EvalResult back = eval_result_from_json(parsed[0]);
  ASSERT_TRUE(back.expert.has_value());
  EXPECT_EQ(back.expert->unstable_reason, e.unstable_reason);
  EXPECT_EQ(back.expert->baseline_median_ms, 20.8);
  EXPECT_EQ(back.expert->speedup_verdict, "unstable");

  // A stable summary writes null for both, and older records without the keys still load.
  r.expert->unstable_reason.clear();
  r.expert->baseline_median_ms.reset();
  nlohmann::json stable = nlohmann::json::parse(render({r}, Format::kJson))[0];
  EXPECT_TRUE(stable["expert"]["unstable_reason"].is_null());
  stable["expert"].erase("unstable_reason");
  stable["expert"].erase("baseline_median_ms");
  const EvalResult old = eval_result_from_json(stable);
  EXPECT_TRUE(old.expert->unstable_reason.empty());
  EXPECT_FALSE(old.expert->baseline_median_ms.has_value());
}

TEST(JsonSinkTest, EmptyListIsEmptyArray) {
  EXPECT_EQ(nlohmann::json::parse(render({}, Format::kJson)), nlohmann::json::array());
}

TEST(TableSinkTest, SaysBelowTheTableWhichResultsAreSuspiciousAndWhy) {
  EvalResult flagged = correct_result();
  flagged.id = 7;
  flagged.suspicious = "median 1 ms is below the physical floor of 2 ms";
  const std::string text = render({correct_result(), flagged}, Format::kTable);
  EXPECT_NE(text.find("\nsuspicious  id 7 8p_GEMM: median 1 ms is below the physical floor of 2 "
                      "ms\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("suspicious"), text.rfind("suspicious")) << text;  // the flagged one only
}

TEST(TableSinkTest, ShowsWorkloadStatusAndAlignsColumns) {
  const std::string text = render({correct_result(), failed_result()}, Format::kTable);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << text;

  EXPECT_NE(lines[1].find("8p_GEMM"), std::string::npos);
  EXPECT_NE(lines[1].find("correct"), std::string::npos);
  EXPECT_NE(lines[1].find("2.00x [1.90, 2.10]"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("3p_Softmax"), std::string::npos);
  EXPECT_NE(lines[2].find("compile_error"), std::string::npos);

  // Left-aligned columns start where their header starts.
  for (const char* header : {"workload", "status"}) {
    const std::size_t at = lines[0].find(header);
    ASSERT_NE(at, std::string::npos);
    EXPECT_NE(lines[1][at], ' ') << header;
    EXPECT_EQ(lines[1][at - 1], ' ') << header;
    EXPECT_NE(lines[2][at], ' ') << header;
  }
  EXPECT_EQ(lines[1].substr(lines[0].find("status"), 7), "correct");
  EXPECT_EQ(lines[2].substr(lines[0].find("status"), 13), "compile_error");
  // Right-aligned numbers end where their header ends.
  const std::size_t cand_end = lines[0].find("cand_ms") + 7;
  EXPECT_EQ(lines[1].substr(cand_end - 5, 5), "1.250");
  EXPECT_EQ(lines[2].substr(cand_end - 1, 1), "-");
}

TEST(VerdictTest, CorrectResultShowsTimingSpeedupAndUtilization) {
  std::ostringstream out;
  write_verdict(out, correct_result());
  const std::string text = out.str();
  for (const char* part : {"8p_GEMM", "CORRECT", "passed over 3 trials", "max_abs_err 1.500e-03",
                           "; the 50 timed calls passed too\n", "median 1.250 ms", "p25 1.200",
                           "p75 1.300", "median 2.500 ms", "2.00x", "95% CI 1.90x .. 2.10x",
                           "123.4 GFLOP/s", "45.6%", "fp32_fma", "warmup 5, wall 12.5 s"}) {
    EXPECT_NE(text.find(part), std::string::npos) << "missing '" << part << "' in\n" << text;
  }
  EXPECT_NE(text.find("/tmp/gemm.cc  (000012345678)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("diagnostics"), std::string::npos);
}

EvalResult measured_result() {
  EvalResult r = correct_result();
  r.utilization->math = "bf16_matmul";
  r.utilization->peak_flops_kind = "bf16_dot";
  r.utilization->intensity = 170;
  r.utilization->balance = 30;
  r.utilization->bound = "compute";
  r.utilization->roofline_ms = 1.0;
  r.utilization->pct_roofline = 80.0;
  r.utilization->library_ms = 1.2;
  r.utilization->library_gflops = 200;
  r.utilization->library_method = "gemm 768x2688x768:nn:bf16:t1 onednn_bf16";
  r.utilization->pct_library = 61.7;
  r.speedup_verdict = "faster";
  NoiseReport n;
  n.cv_candidate = 0.04;
  n.cv_baseline = 0.03;
  n.steal_pct = 0.5;
  n.calls = 100;
  n.disturbed_calls = 7;
  n.accounted = true;
  n.stable = true;
  n.stop_reason = "ci_target";
  n.ci_half_width_pct = 1.8;
  OrderEffect order;
  order.candidate_first = 1.09;
  order.baseline_first = 1.03;
  order.split = 1.09 / 1.03;
  order.carryover = 1.004;
  n.order_effect = order;
  r.noise = n;
  r.baseline_library_plan = "768x2688x768:onednn_bf16";
  return r;
}

TEST(VerdictTest, ShowsNoiseRooflineLibraryCeilingAndBaselinePath) {
  std::ostringstream out;
  write_verdict(out, measured_result());
  const std::string text = out.str();
  for (const char* part :
       {"2.00x  (95% CI 1.90x .. 2.10x)  faster", "noise", "stable; 7 of 100 calls disturbed",
        "steal 0.5%", "per-call spread (IQR/median) 8.0% / 8.0%",
        "ci_target after 50 pairs (CI +-1.8%)", "80.0% of roofline (compute-bound on bf16_dot",
        "61.7% of library ceiling (1.200 ms", "gemm 768x2688x768:nn:bf16:t1 onednn_bf16",
        "path 768x2688x768:onednn_bf16",
        "order split 1.058 (1.090x candidate first, 1.030x baseline first), carry-over 1.004"}) {
    EXPECT_NE(text.find(part), std::string::npos) << "missing '" << part << "' in\n" << text;
  }
}

TEST(VerdictTest, ACeilingTimedAgainBesideTheResultSaysSo) {
  EvalResult r = measured_result();
  std::ostringstream cached;
  write_verdict(cached, r);
  EXPECT_EQ(cached.str().find("timed again"), std::string::npos) << cached.str();
  r.library_ceiling = LibraryCeiling{1.2, {}, /*retimed=*/true};
  std::ostringstream retimed;
  write_verdict(retimed, r);
  EXPECT_NE(retimed.str().find("onednn_bf16; timed again beside it)"), std::string::npos)
      << retimed.str();
}

TEST(VerdictTest, UnstableRunClaimsNoDifference) {
  EvalResult r = measured_result();
  r.noise->stable = false;
  r.noise->unstable_reason = "CI half-width 7.5% > 5%";
  r.speedup_verdict = "unstable";
  std::ostringstream out;
  write_verdict(out, r);
  const std::string text = out.str();
  EXPECT_NE(text.find("unstable: no significant difference claimed"), std::string::npos) << text;
  EXPECT_NE(text.find("UNSTABLE (CI half-width 7.5% > 5%)"), std::string::npos) << text;
  EXPECT_EQ(text.find("  faster"), std::string::npos) << text;
}

TEST(VerdictTest, UnmeasuredRooflineSaysSo) {
  EvalResult r = correct_result();  // utilization without roofs, as records before the roofline
  std::ostringstream out;
  write_verdict(out, r);
  EXPECT_NE(out.str().find("roofline     unknown"), std::string::npos) << out.str();
}

TEST(TableSinkTest, ShowsRooflineAndNoiseColumns) {
  const std::vector<EvalResult> results = {measured_result(), failed_result()};
  std::ostringstream out;
  write_results(out, results, Format::kTable);
  const std::string text = out.str();
  for (const char* part :
       {"%roof", "bound", "noise", "80.0", "compute", "stable", "unit", "bf16_dot", "%lib", "61.7"})
    EXPECT_NE(text.find(part), std::string::npos) << part << " in\n" << text;
}

TEST(CsvSinkTest, CarriesNoiseRooflineAndPathColumns) {
  const std::vector<EvalResult> results = {measured_result()};
  std::ostringstream out;
  write_results(out, results, Format::kCsv);
  const auto rows = parse_csv(out.str());
  ASSERT_GE(rows.size(), 2u);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(it, rows[0].end()) << name;
    return it == rows[0].end() ? std::string() : rows[1][it - rows[0].begin()];
  };
  EXPECT_EQ(column("pct_roofline"), "80");
  EXPECT_EQ(column("bound"), "compute");
  EXPECT_EQ(column("peak_flops_kind"), "bf16_dot");
  EXPECT_EQ(column("pct_library"), "61.7");
  EXPECT_EQ(column("stable"), "true");
  EXPECT_EQ(column("steal_pct"), "0.5");
  EXPECT_EQ(column("disturbed_calls"), "7");
  EXPECT_EQ(column("stop_reason"), "ci_target");
  EXPECT_EQ(column("speedup_verdict"), "faster");
  EXPECT_EQ(column("baseline_path"), "768x2688x768:onednn_bf16");
}

// A compiler's first errors explain the rest, so a compile error shows the head of the output; a
// crash's cause is at the end of the worker's log, so a runtime error shows the tail.
TEST(VerdictTest, CompileErrorShowsItsFirstLinesACrashItsLast) {
  EvalResult r = failed_result();
  for (int i = 0; i < 100; ++i) r.diagnostics += "\nnote: line " + std::to_string(i);
  std::ostringstream out;
  write_verdict(out, r);
  std::string text = out.str();
  EXPECT_NE(text.find("COMPILE_ERROR"), std::string::npos) << text;
  EXPECT_NE(text.find(r.error), std::string::npos) << text;
  EXPECT_NE(text.find("| gemm.cc:1:2: error: expected ';'"), std::string::npos) << text;
  EXPECT_NE(text.find("| note: line 37\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("| note: line 38\n"), std::string::npos) << "diagnostics not truncated";
  EXPECT_NE(text.find("first 40 of 102 lines"), std::string::npos) << text;
  EXPECT_EQ(text.find("speedup"), std::string::npos);

  r.status = Status::kRuntimeError;
  out.str("");
  write_verdict(out, r);
  text = out.str();
  EXPECT_NE(text.find("| note: line 99"), std::string::npos) << text;
  EXPECT_EQ(text.find("| note: line 59\n"), std::string::npos) << text;
  EXPECT_NE(text.find("last 40 of 102 lines"), std::string::npos) << text;
}

// What was not measured is not printed: a candidate that crashed, timed out or was rejected before
// any output was compared has no errors to show (a "max_abs_err 0" would read as perfect).
TEST(VerdictTest, ShowsCorrectnessErrorsOnlyWhereOutputsWereCompared) {
  EvalResult r = failed_result();
  r.status = Status::kRuntimeError;
  r.error = "worker died: SIGSEGV";
  r.correctness.seeds = {7};
  std::ostringstream out;
  write_verdict(out, r);
  EXPECT_EQ(out.str().find("max_abs_err"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("correctness"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("warmup"), std::string::npos) << "no call was timed: " << out.str();

  r.correctness.trials = 2;  // two trials compared and within tolerance, then the third crashed
  r.correctness.max_abs_err = 1e-3;
  r.correctness.seeds = {7, 8, 9};
  out.str("");
  write_verdict(out, r);
  EXPECT_NE(out.str().find("2 trials compared, within tolerance, before the check stopped"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("FAILED"), std::string::npos) << out.str();
}

// The lines the verdict, analyze's compile error and the scaffold show, one by one.
TEST(SplitLines, AFinalNewlineStartsNoLineAndEmptyLinesStay) {
  using Lines = std::vector<std::string_view>;
  EXPECT_EQ(split_lines(""), Lines{});
  EXPECT_EQ(split_lines("a"), Lines{"a"});
  EXPECT_EQ(split_lines("a\nb\n"), (Lines{"a", "b"}));
  EXPECT_EQ(split_lines("a\n\nb"), (Lines{"a", "", "b"}));
  EXPECT_EQ(split_lines("\n"), Lines{""});
}

TEST(TerminalSafe, EscapesControlBytesAndInvalidUtf8AndKeepsTheRest) {
  EXPECT_EQ(terminal_safe("plain text\twith a tab"), "plain text\twith a tab");
  EXPECT_EQ(terminal_safe("\x1b[2Jcleared"), "\\x1b[2Jcleared");
  EXPECT_EQ(terminal_safe(std::string("a\0b\x7f\n", 5)), "a\\x00b\\x7f\\x0a");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80");
  // A lone continuation byte, a truncated sequence, an overlong '/', a surrogate, ELF's magic.
  EXPECT_EQ(terminal_safe("\x80"), "\\x80");
  EXPECT_EQ(terminal_safe("\xe2\x9c"), "\\xe2\\x9c");
  EXPECT_EQ(terminal_safe("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(terminal_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(terminal_safe("\x7f"
                          "ELF\x02\x01"),
            "\\x7fELF\\x02\\x01");
}

TEST(TerminalSafe, ClipLineCutsLongLinesBetweenCharactersAndSaysHowMuchWasCut) {
  EXPECT_EQ(clip_line("short", 10), "short");
  EXPECT_EQ(clip_line("0123456789abc", 10), "0123456789 [... 3 more bytes]");
  // "\xc3\xa9" (e-acute) straddles byte 10: the cut moves before it, not into it.
  EXPECT_EQ(clip_line("012345678\xc3\xa9xyz", 10), "012345678 [... 5 more bytes]");
}

// A binary file given as the source: the compiler quotes its one enormous "line"; the verdict
// shows a screenful of it and the errors after it, not all of it.
TEST(VerdictTest, AnEnormousDiagnosticLineIsClippedAndTheNextErrorsStillShow) {
  EvalResult r = failed_result();
  r.diagnostics = "b.cpp:1:1: error: stray '\\177' in program\n    1 | " + std::string(50000, 'x') +
                  "\nb.cpp:2:9: error: the second error";
  std::ostringstream out;
  write_verdict(out, r);
  const std::string text = out.str();
  EXPECT_NE(text.find("more bytes]"), std::string::npos) << text.substr(0, 600);
  EXPECT_NE(text.find("| b.cpp:2:9: error: the second error"), std::string::npos);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LT(line.size(), 500u);
}

TEST(VerdictTest, PrintsNoRawBytesOfACandidatesOutput) {
  EvalResult r = failed_result();
  r.diagnostics =
      "b.cpp:1:1: error: stray '\\177' in program\n    1 | \x7f"
      "ELF\x02\x01\x01\x1b[31m";
  r.candidate_path = "b\x1b]0;title\x07.cpp";
  std::ostringstream out;
  write_verdict(out, r);
  for (const char c : out.str()) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(byte == '\n' || byte == '\t' || (byte >= 0x20 && byte < 0x7f))
        << "raw byte " << static_cast<int>(byte) << " in\n"
        << out.str();
  }
}

TEST(FormatTest, ParsesCliNames) {
  EXPECT_EQ(parse_format("table"), Format::kTable);
  EXPECT_EQ(parse_format("json"), Format::kJson);
  EXPECT_EQ(parse_format("csv"), Format::kCsv);
  EXPECT_EQ(parse_format("xml"), std::nullopt);
}

}  // namespace
}  // namespace kbench
