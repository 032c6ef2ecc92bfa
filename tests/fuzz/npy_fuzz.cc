// libFuzzer target for the .npy reader (core/npy.h), which reads files other frameworks wrote for
// `kbench check`. Any bytes must parse or throw NpyError with a one-line message; the file reader
// and the in-memory parser must agree; what parses must come back unchanged when written and read
// again.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/npy.h"
#include "fuzz_support.h"

namespace {

using kbench::NpyArray;
using kbench::NpyError;
using kbench::fuzz::require;

struct Outcome {
  std::optional<NpyArray> array;
  std::string error;  // NpyError's message when `array` is empty
};

template <typename Parse>
Outcome attempt(Parse parse) {
  try {
    return {parse(), ""};
  } catch (const NpyError& e) {
    kbench::fuzz::require_one_line(e.what(), "NpyError's message");
    return {std::nullopt, e.what()};
  }
}

bool same(const NpyArray& a, const NpyArray& b) {
  return a.type == b.type && a.shape == b.shape && a.data == b.data;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kbench::fuzz::MemoryFile file;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const Outcome parsed = attempt([&] { return kbench::parse_npy(bytes); });
  file.assign(data, size);
  const Outcome read = attempt([&] { return kbench::read_npy(file.path()); });
  require(parsed.array.has_value() == read.array.has_value(),
          "parse_npy and read_npy disagree: '" + parsed.error + "' vs '" + read.error + "'");
  require(parsed.error == read.error, "parse_npy and read_npy give different reasons: '" +
                                          parsed.error + "' vs '" + read.error + "'");
  if (!parsed.array) return 0;
  const NpyArray& array = *parsed.array;
  require(same(array, *read.array), "parse_npy and read_npy read different arrays");
  require(array.data.size() ==
              static_cast<std::size_t>(array.numel()) * kbench::npy_type_size(array.type),
          "data size is not numel() * item size");

  // kbench's writer on what its reader accepted: 64-byte aligned data, and the same array back,
  // both from the header + data in memory and from the file write_npy() writes.
  const std::string header = kbench::npy_header(array.type, array.shape);
  require(header.size() % 64 == 0, "npy_header() does not align the data to 64 bytes");
  const std::string image =
      header + std::string(reinterpret_cast<const char*>(array.data.data()), array.data.size());
  const Outcome reparsed = attempt([&] { return kbench::parse_npy(image); });
  require(reparsed.array && same(*reparsed.array, array),
          "npy_header() + data does not parse back to the same array: " + reparsed.error);
  kbench::write_npy(file.path(), array.type, array.shape, array.data.data());
  const Outcome reread = attempt([&] { return kbench::read_npy(file.path()); });
  require(reread.array && same(*reread.array, array),
          "write_npy() does not read back as the same array: " + reread.error);
  return 0;
}
