// The agents' reports: the JSON summary's keys, the Markdown tables, and the HTML page as headless
// Chromium renders it (DOM and screenshot).
#include "agents/report.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "agents/metrics_fixture.h"

namespace kbench::agents {
namespace {

namespace fs = std::filesystem;
using testing::make_sample;
using testing::two_method_samples;

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

TEST(AgentReportJson, HasEveryKeyOfTheSummary) {
  const nlohmann::json json = metrics_json(compute_metrics(two_method_samples()));
  ASSERT_EQ(json.size(), 4u);
  ASSERT_TRUE(json.contains("methods"));
  ASSERT_TRUE(json.contains("overall"));
  ASSERT_TRUE(json.contains("machines"));  // empty here: the fixture's samples name none
  ASSERT_TRUE(json.contains("machines_of_workload"));
  ASSERT_EQ(json["methods"].size(), 2u);
  const std::vector<std::string> keys{"samples",
                                      "correct_samples",
                                      "per_sample_correctness",
                                      "workloads",
                                      "solved",
                                      "geomean_speedup",
                                      "fast_p",
                                      "significantly_faster",
                                      "fast_p_at",
                                      "failures",
                                      "best_speedup",
                                      "correctness_by_round",
                                      "prompt_tokens",
                                      "completion_tokens",
                                      "llm_seconds"};
  for (const nlohmann::json& m :
       {json["methods"]["best-of-n"], json["methods"]["iterative"], json["overall"]}) {
    EXPECT_EQ(m.size(), keys.size()) << m.dump();
    for (const auto& key : keys) EXPECT_TRUE(m.contains(key)) << key;
    for (const char* p : {"0", "1", "1.5", "2"}) EXPECT_TRUE(m["fast_p"][p].is_number()) << p;
    EXPECT_EQ(m["fast_p_at"].size(), 3u);  // N = 1, 2, 4
    for (const char* kind : kFailureKinds) EXPECT_TRUE(m["failures"][kind].is_number()) << kind;
  }
  const nlohmann::json& best_of_n = json["methods"]["best-of-n"];
  EXPECT_EQ(best_of_n["samples"], 8);
  EXPECT_EQ(best_of_n["solved"], 1);
  EXPECT_DOUBLE_EQ(best_of_n["geomean_speedup"].get<double>(), std::sqrt(2.5));
  EXPECT_DOUBLE_EQ(best_of_n["fast_p_at"]["2"]["0"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(best_of_n["best_speedup"]["1p_X"].get<double>(), 2.5);
  EXPECT_TRUE(best_of_n["best_speedup"]["2p_Y"].is_null());  // listed, unsolved
  EXPECT_EQ(best_of_n["correctness_by_round"], nlohmann::json::parse("[[0, 0.25]]"));
  EXPECT_EQ(json["methods"]["iterative"]["failures"]["sandbox_violation"], 1);
  EXPECT_EQ(json["overall"]["prompt_tokens"], 1800);
  // What is written parses back to the same document (null stays null).
  EXPECT_EQ(nlohmann::json::parse(json.dump()), json);
}

TEST(AgentReportMarkdown, PaperTableAndCompanions) {
  const std::string md = metrics_markdown(compute_metrics(two_method_samples()));
  const auto has = [&](const std::string& line) {
    EXPECT_NE(md.find(line + "\n"), std::string::npos) << "missing: " << line << "\nin:\n" << md;
  };
  has("| method | samples | correct % | solved | geomean speedup | fast_0 | fast_1 | fast_1.5 | "
      "fast_2 | faster (CI) |");
  has("| :-- | --: | --: | --: | --: | --: | --: | --: | --: | --: |");
  // sqrt(2.5) = 1.58; cbrt(1.6 * 3) = 1.687; cbrt(2.5 * 3) = 1.957.
  has("| best-of-n | 8 | 25.0% | 1/2 | 1.58x | 50.0% | 50.0% | 50.0% | 50.0% | 50.0% |");
  has("| iterative | 10 | 60.0% | 3/3 | 1.69x | 100.0% | 66.7% | 66.7% | 33.3% | 33.3% |");
  has("| **overall** | **18** | **44.4%** | **3/3** | **1.96x** | **100.0%** | **66.7%** | "
      "**66.7%** | **66.7%** | **66.7%** |");
  has("| best-of-n | 2 | 50.0% | 0.0% | 0.0% | 0.0% |");  // fast_p@2
  has("| method | compile_error | runtime_error | incorrect | timeout | rejected | no_code | "
      "llm_error | slower | sandbox_violation |");
  has("| best-of-n | 1 | 1 | 1 | 1 | 0 | 1 | 1 | 1 | 0 |");
  has("| iterative | 1 | 0 | 1 | 0 | 1 | 0 | 0 | 3 | 1 |");
  has("| workload | best-of-n | iterative | overall |");
  has("| 1p_X | 2.50x | 1.60x | 2.50x |");
  has("| 2p_Y | - | 3.00x | 3.00x |");  // best-of-n sampled it, without success
  has("| 3p_Z |  | 1.00x | 1.00x |");   // best-of-n never sampled it
  has("| iterative | 1000 | 200 | 5.0 |");
}

TEST(AgentReportMarkdown, NamesTheMachinesThatEvaluated) {
  std::vector<AgentSample> samples = two_method_samples();
  for (AgentSample& s : samples)
    if (s.status == "correct") s.machine = s.workload == "2p_Y" ? "node2 (CPU B)" : "node1 (CPU A)";
  const std::string md = metrics_markdown(compute_metrics(samples));
  for (const char* line : {"| machine | evaluated samples | correct | workloads |",
                           "| node1 (CPU A) | 6 | 6 | 2 |", "| node2 (CPU B) | 2 | 2 | 1 |",
                           "| workload | best-of-n | iterative | overall | machines |",
                           "| 2p_Y | - | 3.00x | 3.00x | node2 (CPU B) |"})
    EXPECT_NE(md.find(std::string(line) + "\n"), std::string::npos) << line << "\nin:\n" << md;
  // One machine: named once, in its table, not in every row.
  for (AgentSample& s : samples)
    if (!s.machine.empty()) s.machine = "node1 (CPU A)";
  const std::string one = metrics_markdown(compute_metrics(samples));
  EXPECT_NE(one.find("| node1 (CPU A) | 8 | 8 | 3 |"), std::string::npos) << one;
  EXPECT_EQ(one.find("| machines |"), std::string::npos) << one;
}

TEST(AgentReportMarkdown, ListsMethodsInThePapersOrder) {
  std::vector<AgentSample> samples;
  for (const char* method : {"zeta", "beam", "iterative-context", "best-of-n"})
    samples.push_back(make_sample(method, "1p_X", 0, 0, "correct", 2.0));
  const std::string md = metrics_markdown(compute_metrics(samples));
  const auto best_of_n = md.find("| best-of-n |"), context = md.find("| iterative-context |"),
             beam = md.find("| beam |"), zeta = md.find("| zeta |");
  ASSERT_NE(zeta, std::string::npos) << md;
  EXPECT_LT(best_of_n, context);
  EXPECT_LT(context, beam);
  EXPECT_LT(beam, zeta);
  EXPECT_NE(md.find("| workload | best-of-n | iterative-context | beam | zeta | overall |"),
            std::string::npos)
      << md;
}

TEST(AgentReportMarkdown, EscapesNamesAndSaysWhenEmpty) {
  const std::string md =
      metrics_markdown(compute_metrics({make_sample("beam", "a|b*c_", 0, 0, "correct", 2.0)}));
  EXPECT_NE(md.find("| a\\|b\\*c\\_ | 2.00x | 2.00x |"), std::string::npos) << md;
  EXPECT_NE(metrics_markdown(compute_metrics({})).find("No agent samples."), std::string::npos);
}

TEST(AgentReportHtml, EscapesNames) {
  const std::string html =
      metrics_html(compute_metrics({make_sample("be\"am", "<i>x</i>&", 0, 0, "correct", 2.0)}));
  EXPECT_EQ(html.find("<i>"), std::string::npos);
  EXPECT_EQ(html.find("be\"am"), std::string::npos);
  EXPECT_NE(html.find("&lt;i&gt;x&lt;/i&gt;&amp;"), std::string::npos);
  EXPECT_NE(html.find("be&quot;am"), std::string::npos);
  // Self-contained: nothing to fetch, nothing to run.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
}

// Debian's chromium, run headless in a directory of the test's own (its profile and HOME), each run
// under `timeout 60` so a hung browser fails the test instead of the CTest timeout.
class HeadlessChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
      if (::access(candidate, X_OK) == 0) {
        exe_ = candidate;
        break;
      }
    if (exe_.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh adds it)";
    std::string pattern = (fs::temp_directory_path() / "kbench-report-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  fs::path write(const std::string& name, const std::string& content) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << content;
    return path;
  }

  // Runs chromium on `page` with `args`; returns its stdout, or nullopt (with its log in the
  // failure message) when it did not exit 0.
  std::optional<std::string> run(const std::string& args, const fs::path& page) {
    const fs::path profile = dir_ / ("profile-" + std::to_string(runs_++));
    const fs::path out = dir_ / "stdout", log = dir_ / "chromium.log";
    const std::string command = "HOME='" + dir_.string() + "' timeout 60 " + exe_ +
                                " --headless=new --no-sandbox --disable-gpu --no-first-run"
                                " --hide-scrollbars --user-data-dir='" +
                                profile.string() + "' " + args + " 'file://" + page.string() +
                                "' >'" + out.string() + "' 2>'" + log.string() + "'";
    const int status = std::system(command.c_str());
    if (status != 0) {
      ADD_FAILURE() << "chromium exited with status " << status << ":\n" << slurp(log);
      return std::nullopt;
    }
    return slurp(out);
  }

  static std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string exe_;
  fs::path dir_;
  int runs_ = 0;
};

// The fixture's two methods plus a third with a hostile workload name: 1 + 3 + 1 bars (one per
// workload a method has a timed correct sample of), 4 fast_p points per method, one point per
// method and round (best-of-n 1, iterative 4, beam 1).
std::vector<AgentSample> rendered_samples() {
  auto samples = two_method_samples();
  samples.push_back(make_sample("beam", "<i>evil</i> & \"q\"", 0, 0, "correct", 1.5));
  return samples;
}

TEST_F(HeadlessChromium, DomHasTheChartsAndTheirMarks) {
  const fs::path page = write("report.html", metrics_html(compute_metrics(rendered_samples())));
  const auto dom = run("--dump-dom", page);
  ASSERT_TRUE(dom.has_value());
  for (const char* id : {"id=\"speedup-chart\"", "id=\"fastp-chart\"", "id=\"rounds-chart\""})
    EXPECT_EQ(count(*dom, id), 1u) << id;
  EXPECT_EQ(count(*dom, "</svg>"), 3u);
  EXPECT_EQ(count(*dom, "<rect class=\"bar\""), 5u);
  EXPECT_EQ(count(*dom, "<circle class=\"fastp-point\""), 12u);
  EXPECT_EQ(count(*dom, "<polyline class=\"fastp-curve\""), 3u);
  EXPECT_EQ(count(*dom, "<circle class=\"round-point\""), 6u);
  EXPECT_EQ(count(*dom, "<polyline class=\"rounds-line\""), 3u);
  // The hostile name is text in the DOM, not an element.
  EXPECT_EQ(dom->find("<i>"), std::string::npos);
  EXPECT_NE(dom->find("&lt;i&gt;evil&lt;/i&gt;"), std::string::npos);
}

TEST_F(HeadlessChromium, ScreenshotIsNotBlank) {
  const fs::path page = write("report.html", metrics_html(compute_metrics(rendered_samples())));
  const fs::path blank = write("blank.html", "<!DOCTYPE html><html><body></body></html>\n");
  const std::string size = " --window-size=1200,2000";
  ASSERT_TRUE(run("--screenshot='" + (dir_ / "report.png").string() + "'" + size, page));
  ASSERT_TRUE(run("--screenshot='" + (dir_ / "blank.png").string() + "'" + size, blank));
  const std::string report_png = slurp(dir_ / "report.png"), blank_png = slurp(dir_ / "blank.png");
  ASSERT_GE(report_png.size(), 8u);
  EXPECT_EQ(report_png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n"));
  // A blank page compresses to almost nothing; charts, text and tables do not. Same window, so
  // the difference is the content.
  EXPECT_GT(report_png.size(), 20000u);
  EXPECT_GT(report_png.size(), 4 * blank_png.size())
      << "report " << report_png.size() << " bytes, blank " << blank_png.size() << " bytes";
}

}  // namespace
}  // namespace kbench::agents
