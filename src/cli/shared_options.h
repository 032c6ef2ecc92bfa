// The options several subcommands take, each spelled and explained once: the workload, the size,
// the database, recording and JSON output. A command's own options stay in its add_X_command.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kbench::cli {

// --workload/-w, one workload, required.
void add_workload_option(CLI::App* command, std::string& workload);

// --workload/-w, repeatable; `when_none` says what the command takes without one ("the suite").
void add_workloads_option(CLI::App* command, std::vector<std::string>& workloads,
                          const std::string& when_none);

// --size. `what_for` says what the size decides where that is more than the inputs' shapes.
void add_size_option(CLI::App* command, std::string& size, const std::string& what_for = "");

// --db.
void add_db_option(CLI::App* command, std::string& db);

// --no-record; `what` names what is not written ("the result", "the runs").
void add_no_record_flag(CLI::App* command, bool& no_record, const std::string& what);

// A seed as kbench prints one: decimal digits, 0 to 2^64 - 1, nothing else ("010" is 10). CLI11
// alone reads "-1" as 2^64 - 1, "010" as 8 and "0x10" as 16, and a longer number as 2^64 - 1, so
// two different seeds typed could silently be one, and none of them the one typed.
CLI::Validator seed_validator();

// --seed, read by seed_validator.
void add_seed_option(CLI::App* command, std::optional<std::uint64_t>& seed,
                     const std::string& help);

// --json; `what` names what is printed ("one JSON object", "a JSON array").
void add_json_flag(CLI::App* command, bool& json, const std::string& what);

}  // namespace kbench::cli
