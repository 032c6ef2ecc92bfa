// .npy reading and writing. The header dict is parsed strictly (exactly NumPy's three keys, Python
// literal syntax) but tolerates any spacing, and every length is checked before it is trusted.
#include "core/npy.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "core/readable_file.h"

namespace kbench {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// NumPy aligns the data to 64 bytes (numpy.lib.format.ARRAY_ALIGN) so it can be memory-mapped.
constexpr std::size_t kAlign = 64;
// A header describes three keys; even a rank-64 shape of 19-digit extents needs under 2 KB. The
// limit only stops a corrupt length field from making the reader allocate gigabytes.
constexpr std::size_t kMaxHeaderBytes = std::size_t{1} << 20;
// NumPy 2 allows up to 64 dimensions (NPY_MAXDIMS).
constexpr std::size_t kMaxRank = 64;
// Magic, two version bytes and the 4-byte header length of versions 2.0 and 3.0.
constexpr std::size_t kLongestPreamble = 12;

struct TypeInfo {
  NpyType type;
  const char* descr;
  const char* name;
  std::size_t size;
};

constexpr TypeInfo kTypes[] = {
    {NpyType::kF32, "<f4", "float32", 4},
    {NpyType::kF16, "<f2", "float16", 2},
    {NpyType::kU16, "<u2", "uint16", 2},
    {NpyType::kI32, "<i4", "int32", 4},
};

const TypeInfo& info(NpyType type) {
  for (const TypeInfo& t : kTypes)
    if (t.type == type) return t;
  throw std::invalid_argument("unknown NpyType");
}

// The header's fields, and where the data starts.
struct Layout {
  NpyType type = NpyType::kF32;
  std::vector<std::int64_t> shape;
  std::size_t data_offset = 0;
  std::uint64_t data_bytes = 0;
};

// Element count and byte size of `shape`, or nullopt when either overflows 63 bits.
std::optional<std::uint64_t> byte_size(std::span<const std::int64_t> shape, std::size_t item_size) {
  std::int64_t n = 1;
  for (std::int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<std::int64_t>(item_size), &bytes)) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

// The header text made printable and short enough for a one-line message.
std::string excerpt(std::string_view text) {
  constexpr std::size_t kMaxChars = 80;
  std::string out;
  for (char c : text.substr(0, kMaxChars)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > kMaxChars) out += "...";
  return out;
}

// A recursive-descent parser for the one dict literal a .npy header holds:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Layout parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<std::int64_t>> shape;
    skip_space();
    expect('{');
    skip_space();
    while (peek() != '}') {
      const std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (descr) fail("duplicate key 'descr'");
        if (peek() != '\'' && peek() != '"')
          fail("'descr' is not a string (structured dtypes are not supported)");
        descr = parse_string();
      } else if (key == "fortran_order") {
        if (fortran_order) fail("duplicate key 'fortran_order'");
        fortran_order = parse_bool();
      } else if (key == "shape") {
        if (shape) fail("duplicate key 'shape'");
        shape = parse_shape();
      } else {
        fail("unexpected key '" + excerpt(key) + "'");
      }
      skip_space();
      if (peek() != ',') break;
      ++pos_;
      skip_space();
    }
    expect('}');
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the closing '}'");
    if (!descr || !fortran_order || !shape)
      fail("it must have the keys 'descr', 'fortran_order' and 'shape'");
    if (*fortran_order)
      throw NpyError(
          "fortran_order is True: only C-order arrays are supported (save "
          "np.ascontiguousarray(a))");
    Layout layout;
    layout.type = type_of(*descr);
    layout.shape = std::move(*shape);
    return layout;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw NpyError("malformed .npy header (" + why + " at character " + std::to_string(pos_) +
                   "): " + excerpt(text_));
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_]) != nullptr) ++pos_;
  }

  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  // A quoted string without escapes: no key or descr NumPy writes contains a backslash.
  std::string parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted key");
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    if (value.find('\\') != std::string::npos) fail("escape sequence in a string");
    pos_ = end + 1;
    return value;
  }

  bool parse_bool() {
    const std::string_view rest = text_.substr(pos_);
    if (rest.starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (rest.starts_with("False")) {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False");
  }

  // A Python tuple of non-negative ints: "()", "(5,)", "(2, 3)" or "(2, 3,)".
  std::vector<std::int64_t> parse_shape() {
    std::vector<std::int64_t> shape;
    expect('(');
    skip_space();
    bool trailing_comma = false;
    while (peek() != ')') {
      shape.push_back(parse_extent());
      if (shape.size() > kMaxRank) fail("more than " + std::to_string(kMaxRank) + " dimensions");
      skip_space();
      trailing_comma = peek() == ',';
      if (!trailing_comma) break;
      ++pos_;
      skip_space();
    }
    expect(')');
    // "(5)" is the int 5 in Python, not a tuple: NumPy would not have written it.
    if (shape.size() == 1 && !trailing_comma) fail("a 1-d shape must be written (n,)");
    return shape;
  }

  std::int64_t parse_extent() {
    if (peek() == '-') fail("negative dimension in 'shape'");
    if (peek() < '0' || peek() > '9') fail("'shape' must be a tuple of integers");
    std::int64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, peek() - '0', &value))
        fail("dimension too large");
      ++pos_;
    }
    return value;
  }

  static NpyType type_of(const std::string& descr) {
    for (const TypeInfo& t : kTypes)
      if (descr == t.descr) return t.type;
    if (descr.size() > 1 && descr[0] == '>') {
      throw NpyError("big-endian dtype '" + excerpt(descr) + "' is not supported (save it as '<" +
                     excerpt(descr.substr(1)) + "')");
    }
    throw NpyError("unsupported dtype '" + excerpt(descr) +
                   "' (supported: '<f4' float32, '<f2' float16, '<u2' uint16, '<i4' int32)");
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::uint32_t little_endian(std::string_view bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;)
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

// The length of magic + version + header-length field, and the header length, from the first
// bytes of a file (`head`, at most kLongestPreamble of them, fewer only when the file is shorter).
std::pair<std::size_t, std::size_t> parse_preamble(std::string_view head) {
  if (head.empty()) throw NpyError("empty file");
  if (!head.starts_with(kMagic)) {
    throw NpyError(kMagic.starts_with(head)
                       ? "truncated: the file ends inside the magic string"
                       : "not a .npy file (it does not start with \\x93NUMPY)");
  }
  if (head.size() < kMagic.size() + 2)
    throw NpyError("truncated: the file ends before the format version");
  const int major = static_cast<unsigned char>(head[6]);
  const int minor = static_cast<unsigned char>(head[7]);
  if ((major < 1 || major > 3) || minor != 0) {
    throw NpyError("unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t preamble = kMagic.size() + 2 + length_bytes;
  if (head.size() < preamble) throw NpyError("truncated: the file ends inside the header length");
  const std::size_t header_length = little_endian(head.substr(kMagic.size() + 2, length_bytes));
  if (header_length > kMaxHeaderBytes)
    throw NpyError("header length " + std::to_string(header_length) + " is implausibly large");
  return {preamble, header_length};
}

// Checks `file_size` against what the header declares and fills in the data's offset and size.
Layout parse_layout(std::string_view preamble_and_header, std::size_t preamble,
                    std::uint64_t file_size) {
  Layout layout = HeaderParser(preamble_and_header.substr(preamble)).parse();
  layout.data_offset = preamble_and_header.size();
  const std::optional<std::uint64_t> bytes = byte_size(layout.shape, info(layout.type).size);
  if (!bytes) throw NpyError("shape " + npy_shape_string(layout.shape) + " is too large");
  layout.data_bytes = *bytes;
  const std::uint64_t present = file_size - layout.data_offset;
  if (present != layout.data_bytes) {
    throw NpyError(std::string(present < layout.data_bytes ? "truncated" : "trailing data") +
                   ": shape " + npy_shape_string(layout.shape) + " of " + info(layout.type).name +
                   " needs " + std::to_string(layout.data_bytes) + " data bytes, the file has " +
                   std::to_string(present));
  }
  return layout;
}

NpyArray array_of(Layout layout) {
  NpyArray array;
  array.type = layout.type;
  array.shape = std::move(layout.shape);
  array.data.resize(layout.data_bytes);
  return array;
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

const char* npy_descr(NpyType type) {
  return info(type).descr;
}
const char* npy_type_name(NpyType type) {
  return info(type).name;
}
std::size_t npy_type_size(NpyType type) {
  return info(type).size;
}

std::int64_t NpyArray::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string npy_shape_string(std::span<const std::int64_t> shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::string npy_header(NpyType type, std::span<const std::int64_t> shape) {
  std::string dict = std::string("{'descr': '") + npy_descr(type) +
                     "', 'fortran_order': False, 'shape': " + npy_shape_string(shape) + ", }";
  // Spaces and a newline to pad magic + version + length field + dict to the alignment.
  const auto padding = [&](std::size_t preamble) {
    return (kAlign - (preamble + dict.size() + 1) % kAlign) % kAlign;
  };
  // Version 1.0 stores the header length in 2 bytes; 2.0 (same header syntax) in 4.
  const bool long_header = dict.size() + padding(kMagic.size() + 4) + 1 > 0xffff;
  const std::size_t preamble = kMagic.size() + 2 + (long_header ? 4 : 2);
  dict.append(padding(preamble), ' ');
  dict += '\n';
  std::string header(kMagic);
  header += static_cast<char>(long_header ? 2 : 1);
  header += '\0';
  for (std::size_t i = 0; i < preamble - kMagic.size() - 2; ++i)
    header += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  return header + dict;
}

void write_npy(const std::filesystem::path& path, NpyType type, std::span<const std::int64_t> shape,
               const void* data) {
  const std::optional<std::uint64_t> bytes = byte_size(shape, npy_type_size(type));
  if (!bytes)
    throw NpyError("cannot write " + path.string() + ": invalid shape " + npy_shape_string(shape));
  const std::string header = npy_header(type, shape);
  File file(std::fopen(path.c_str(), "wb"));
  const auto fail = [&] {
    throw NpyError("cannot write " + path.string() + ": " + std::strerror(errno));
  };
  if (!file) fail();
  if (std::fwrite(header.data(), 1, header.size(), file.get()) != header.size()) fail();
  if (*bytes > 0 && std::fwrite(data, 1, *bytes, file.get()) != *bytes) fail();
  if (std::fclose(file.release()) != 0) fail();
}

NpyArray parse_npy(std::string_view bytes) {
  const auto [preamble, header_length] = parse_preamble(bytes.substr(0, kLongestPreamble));
  if (bytes.size() < preamble + header_length)
    throw NpyError("truncated: the file ends inside the " + std::to_string(header_length) +
                   "-byte header");
  const Layout layout =
      parse_layout(bytes.substr(0, preamble + header_length), preamble, bytes.size());
  const std::size_t offset = layout.data_offset;
  NpyArray array = array_of(layout);
  if (!array.data.empty()) std::memcpy(array.data.data(), bytes.data() + offset, array.data.size());
  return array;
}

NpyArray read_npy(const std::filesystem::path& path, std::uint64_t max_data_bytes) {
  if (const std::string problem = why_not_readable_file(path); !problem.empty())
    throw NpyError(problem);
  std::error_code ec;
  const std::uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw NpyError("cannot stat: " + ec.message());
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) throw NpyError(std::string("cannot open: ") + std::strerror(errno));
  const auto read_fully = [&](void* into, std::size_t n) {
    if (std::fread(into, 1, n, file.get()) != n)
      throw NpyError(std::ferror(file.get()) ? std::string("read failed: ") + std::strerror(errno)
                                             : "the file shrank while it was read");
  };
  std::string head(std::min<std::uintmax_t>(file_size, kLongestPreamble), '\0');
  read_fully(head.data(), head.size());
  const auto [preamble, header_length] = parse_preamble(head);
  if (file_size < preamble + header_length)
    throw NpyError("truncated: the file ends inside the " + std::to_string(header_length) +
                   "-byte header");
  // Read the rest of the header after the preamble bytes already in `head`.
  head.resize(preamble + header_length);
  std::fseek(file.get(), 0, SEEK_SET);
  read_fully(head.data(), head.size());
  Layout layout = parse_layout(head, preamble, file_size);
  if (layout.data_bytes > max_data_bytes) {
    throw NpyError("its header declares " + std::string(npy_type_name(layout.type)) + " " +
                   npy_shape_string(layout.shape) + ", " + std::to_string(layout.data_bytes) +
                   " bytes of data, where at most " + std::to_string(max_data_bytes) +
                   " are expected");
  }
  NpyArray array = array_of(std::move(layout));
  if (!array.data.empty()) read_fully(array.data.data(), array.data.size());
  return array;
}

}  // namespace kbench
