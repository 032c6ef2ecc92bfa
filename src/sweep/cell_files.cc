#include "sweep/cell_files.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/environment.h"

namespace kbench::sweep {
namespace {

constexpr const char* kAttemptPrefix = "attempt-";

// By Outcome's value: the names attempt files are written with.
constexpr std::array<const char*, 3> kOutcomeNames = {"done", "stopped", "failed"};

std::optional<Outcome> outcome_of(const std::string& name) {
  for (std::size_t i = 0; i < kOutcomeNames.size(); ++i)
    if (name == kOutcomeNames[i]) return static_cast<Outcome>(i);
  return std::nullopt;
}

std::string slurm_job() {
  const char* job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (job && task) return std::string(job) + "_" + task;
  if (const char* plain = std::getenv("SLURM_JOB_ID")) return plain;
  return "";
}

// The number in "attempt-N.json", or 0.
int attempt_number(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  if (name.rfind(kAttemptPrefix, 0) != 0 || file.extension() != ".json") return 0;
  const std::string digits =
      name.substr(std::strlen(kAttemptPrefix), name.size() - std::strlen(kAttemptPrefix) - 5);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::atoi(digits.c_str());
}

bool process_alive(long pid) {
  return pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

}  // namespace

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

const char* outcome_name(Outcome outcome) {
  return kOutcomeNames.at(static_cast<std::size_t>(outcome));
}

CellFiles::CellFiles(const std::filesystem::path& sweep_dir, const Cell& cell)
    : dir_(sweep_dir / "cells" / cell.name), shard_(sweep_dir / "shards" / (cell.name + ".db")) {}

std::filesystem::path CellFiles::attempt_file(int number) const {
  return dir_ / (kAttemptPrefix + std::to_string(number) + ".json");
}

std::filesystem::path CellFiles::attempt_db(int number) const {
  return dir_ / (kAttemptPrefix + std::to_string(number) + ".db");
}

std::filesystem::path CellFiles::attempt_log(int number) const {
  return dir_ / (kAttemptPrefix + std::to_string(number) + ".requests.jsonl");
}

std::filesystem::path CellFiles::shard() const {
  return shard_;
}

bool CellFiles::done() const {
  std::error_code ec;
  return std::filesystem::is_regular_file(shard_, ec);
}

Attempt CellFiles::claim_attempt() {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw SweepError("cannot create '" + dir_.string() + "': " + ec.message());
  int number = 1;
  for (const Attempt& a : attempts()) number = std::max(number, a.number + 1);
  for (;; ++number) {
    const int fd =
        open(attempt_file(number).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      close(fd);
      break;
    }
    if (errno != EEXIST)
      throw SweepError("cannot create '" + attempt_file(number).string() +
                       "': " + std::strerror(errno));
  }
  Attempt attempt{.number = number,
                  .host = this_host(),
                  .pid = static_cast<long>(getpid()),
                  .started_at = utc_now_iso8601(),
                  .slurm_job = slurm_job()};
  write_attempt(attempt);
  return attempt;
}

void CellFiles::end_attempt(const Attempt& attempt) const {
  write_attempt(attempt);
}

void CellFiles::write_attempt(const Attempt& a) const {
  nlohmann::json json = {{"attempt", a.number},
                         {"host", a.host},
                         {"pid", a.pid},
                         {"started_at", a.started_at},
                         {"slurm_job", a.slurm_job}};
  if (a.outcome) {
    json["outcome"] = outcome_name(*a.outcome);
    json["exit_code"] = a.exit_code;
    json["message"] = a.message;
    json["ended_at"] = a.ended_at;
  }
  const std::filesystem::path file = attempt_file(a.number), partial = file.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << json.dump(2) << '\n';
    if (!out.flush()) throw SweepError("cannot write '" + partial.string() + "'");
  }
  std::error_code ec;
  std::filesystem::rename(partial, file, ec);
  if (ec) throw SweepError("cannot write '" + file.string() + "': " + ec.message());
}

std::vector<Attempt> CellFiles::attempts() const {
  std::vector<Attempt> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const int number = attempt_number(entry.path());
    if (number == 0) continue;
    Attempt a{.number = number};
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    try {
      const nlohmann::json json = nlohmann::json::parse(text.str());
      a.host = json.value("host", "");
      a.pid = json.value("pid", 0L);
      a.started_at = json.value("started_at", "");
      a.slurm_job = json.value("slurm_job", "");
      if (json.contains("outcome")) {
        a.outcome = outcome_of(json.at("outcome").get<std::string>());
        a.exit_code = json.value("exit_code", 0);
        a.message = json.value("message", "");
        a.ended_at = json.value("ended_at", "");
      }
    } catch (const nlohmann::json::exception&) {
      // Just claimed, its first record not yet renamed into place: it runs.
    }
    found.push_back(std::move(a));
  }
  std::sort(found.begin(), found.end(),
            [](const Attempt& x, const Attempt& y) { return x.number < y.number; });
  return found;
}

const char* cell_state_name(CellState state) {
  static constexpr std::array<const char*, 4> kNames = {"pending", "running", "done", "failed"};
  return kNames.at(static_cast<std::size_t>(state));
}

CellStatus cell_status(const CellFiles& files, int max_attempts) {
  const std::vector<Attempt> attempts = files.attempts();
  CellStatus status{.attempts = static_cast<int>(attempts.size())};
  const std::string host = this_host();
  std::string last_failure;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const Attempt& a = attempts[i];
    const bool latest = i + 1 == attempts.size();
    if (a.outcome == Outcome::kFailed) {
      ++status.failures;
      last_failure = "attempt " + std::to_string(a.number) + " on " + a.host + ": " + a.message;
    } else if (!a.outcome) {
      const bool gone = a.host == host && !process_alive(a.pid);
      if (latest && !gone) {
        status.state = CellState::kRunning;
        status.line = "attempt " + std::to_string(a.number) + " on " + a.host + " since " +
                      a.started_at + (a.slurm_job.empty() ? "" : " (Slurm " + a.slurm_job + ")");
      } else {
        ++status.failures;
        last_failure = "attempt " + std::to_string(a.number) + " on " + a.host +
                       " ended without a word (killed, or its node was lost)";
      }
    } else if (a.outcome == Outcome::kStopped && latest) {
      status.line = "attempt " + std::to_string(a.number) + " " + a.message + "; resumable";
    }
  }
  if (files.done()) {
    status.state = CellState::kDone;
    status.line.clear();
  } else if (status.state != CellState::kRunning && status.failures >= max_attempts) {
    status.state = CellState::kFailed;
    status.line = last_failure;
  } else if (status.state != CellState::kRunning && status.line.empty()) {
    status.line = last_failure;
  }
  return status;
}

}  // namespace kbench::sweep
