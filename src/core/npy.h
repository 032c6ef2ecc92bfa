// NumPy's .npy file format (format.rst of numpy.lib.format): writes version 1.0 (2.0 when the
// header needs it) and reads 1.0, 2.0 and 3.0, for the little-endian C-order arrays kbench
// exchanges with other frameworks. Debian packages no C++ .npy library, hence this one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kbench {

// A file that is not a .npy kbench can read: bad magic, unsupported version or dtype, fortran
// order, a malformed header, or data whose length does not match the header; or a file that cannot
// be written. what() is one line. Read errors give the reason without the path (callers name the
// file); write errors name the path.
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The element types kbench reads and writes, all little-endian.
enum class NpyType {
  kF32,  // '<f4'
  kF16,  // '<f2'
  kU16,  // '<u2': kbench's way to carry bfloat16 bits, which NumPy has no dtype for
  kI32,  // '<i4'
};
const char* npy_descr(NpyType type);      // "<f4", ...
const char* npy_type_name(NpyType type);  // "float32", "float16", "uint16", "int32"
std::size_t npy_type_size(NpyType type);

// A whole array in memory: C order, elements little-endian as in the file.
struct NpyArray {
  NpyType type = NpyType::kF32;
  std::vector<std::int64_t> shape;  // empty: a 0-d array holding one element
  std::vector<unsigned char> data;  // numel() * npy_type_size(type) bytes

  std::int64_t numel() const;
};

// "(2, 37, 61)", "(5,)" or "()": the shape as Python prints a tuple.
std::string npy_shape_string(std::span<const std::int64_t> shape);

// The magic, version, header length and padded header dict that precede the data of an array of
// `type` and `shape`: version 1.0 unless the dict needs more than 65535 bytes, padded with spaces
// and a newline so the data starts 64-byte aligned, as NumPy writes it.
std::string npy_header(NpyType type, std::span<const std::int64_t> shape);

// Writes `data` (product(shape) elements of `type`) as a .npy file, replacing any file at `path`.
// Throws NpyError when the file cannot be written (the message names the path and errno text).
void write_npy(const std::filesystem::path& path, NpyType type, std::span<const std::int64_t> shape,
               const void* data);

// Parses a complete .npy file image. Throws NpyError for anything malformed or unsupported.
NpyArray parse_npy(std::string_view bytes);

// Reads a .npy file. The header is checked against the file's length, and against
// `max_data_bytes`, before the data is allocated: a corrupt or hostile header cannot make it
// allocate more than the file holds, nor a sparse file (gigabytes long, kilobytes on disk) more
// than the caller could use. Throws NpyError for a malformed or unsupported file, for one that
// declares more data than `max_data_bytes`, and for one that cannot be opened or read.
NpyArray read_npy(const std::filesystem::path& path,
                  std::uint64_t max_data_bytes = std::numeric_limits<std::uint64_t>::max());

}  // namespace kbench
