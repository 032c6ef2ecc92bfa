// The .npy reader and writer: round trips of every supported dtype and of a large array, NumPy's
// exact header bytes, hand-built version 1.0/2.0/3.0 headers, and a clear NpyError for every kind
// of malformed file; plus the float16 conversions behind float16 outputs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/f16.h"
#include "core/npy.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("kbench-npy-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

void write_bytes(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A .npy image with a hand-written header dict: magic, version `major`.0, the length field (2 bytes
// for 1.0, 4 for 2.0 and 3.0), the dict as given, then `data`.
std::string npy_image(int major, std::string_view dict, std::string_view data) {
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(major);
  bytes += '\0';
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i)
    bytes += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  bytes += dict;
  bytes += data;
  return bytes;
}

std::string float_bytes(std::initializer_list<float> values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

// Both entry points (in-memory and file) must reject `bytes` with a message containing `reason`.
void expect_rejected(const std::string& bytes, const std::string& reason) {
  try {
    parse_npy(bytes);
    ADD_FAILURE() << "parse_npy accepted a file that should fail with: " << reason;
  } catch (const NpyError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "not one line: " << e.what();
  }
  const fs::path path = temp_file("rejected.npy");
  write_bytes(path, bytes);
  try {
    read_npy(path);
    ADD_FAILURE() << "read_npy accepted a file that should fail with: " << reason;
  } catch (const NpyError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

template <typename T>
void expect_round_trip(NpyType type, std::vector<std::int64_t> shape,
                       const std::vector<T>& values) {
  const fs::path path = temp_file("round_trip.npy");
  write_npy(path, type, shape, values.data());
  const std::string bytes = read_bytes(path);
  const std::size_t data_offset = bytes.size() - values.size() * sizeof(T);
  EXPECT_EQ(data_offset % 64, 0u) << "data must start 64-byte aligned, as NumPy writes it";
  EXPECT_EQ(bytes[data_offset - 1], '\n');
  for (const NpyArray& array : {read_npy(path), parse_npy(bytes)}) {
    EXPECT_EQ(array.type, type);
    EXPECT_EQ(array.shape, shape);
    ASSERT_EQ(array.data.size(), values.size() * sizeof(T));
    if (!values.empty()) {  // memcmp of null pointers is undefined even for 0 bytes
      EXPECT_EQ(std::memcmp(array.data.data(), values.data(), array.data.size()), 0);
    }
  }
}

TEST(Npy, RoundTripsEveryDtype) {
  expect_round_trip<float>(NpyType::kF32, {2, 3}, {0.f, -1.5f, 3.25f, 1e-30f, -0.f, 7.f});
  expect_round_trip<std::uint16_t>(NpyType::kF16, {4}, {0x3c00, 0x8000, 0x7c00, 0x0001});
  expect_round_trip<std::uint16_t>(NpyType::kU16, {1, 3, 1}, {0x3f80, 0xffff, 0});
  expect_round_trip<std::int32_t>(NpyType::kI32, {3},
                                  {-7, 0, std::numeric_limits<std::int32_t>::max()});
}

TEST(Npy, RoundTripsScalarsAndEmptyArrays) {
  expect_round_trip<float>(NpyType::kF32, {}, {42.f});
  expect_round_trip<float>(NpyType::kF32, {0}, {});
  expect_round_trip<std::int32_t>(NpyType::kI32, {3, 0, 5}, {});
}

TEST(Npy, RoundTripsALargeArray) {
  std::vector<float> values(std::size_t{3} << 20);
  std::iota(values.begin(), values.end(), 0.f);
  expect_round_trip<float>(NpyType::kF32, {3, 1 << 20}, values);
}

// The bytes numpy.save writes for np.zeros((2, 37, 61), np.float32) and a 0-d float32, up to the
// data (captured from NumPy 1.24): kbench's files are indistinguishable from NumPy's own.
TEST(Npy, HeaderIsByteForByteNumpys) {
  const std::string padding_3d(53, ' '), padding_0d(62, ' ');
  EXPECT_EQ(npy_header(NpyType::kF32, std::vector<std::int64_t>{2, 37, 61}),
            std::string("\x93NUMPY\x01\x00v\x00", 10) +
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 37, 61), }" + padding_3d +
                "\n");
  EXPECT_EQ(npy_header(NpyType::kF32, std::vector<std::int64_t>{}),
            std::string("\x93NUMPY\x01\x00v\x00", 10) +
                "{'descr': '<f4', 'fortran_order': False, 'shape': (), }" + padding_0d + "\n");
  EXPECT_EQ(npy_shape_string(std::vector<std::int64_t>{5}), "(5,)");
}

TEST(Npy, ReadsHandWrittenHeadersOfEveryVersion) {
  const std::string data = float_bytes({1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  // Any key order, no spaces or extra ones, double quotes, with or without a trailing comma.
  const std::string dicts[] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n",
      "{'shape':(2,3),'fortran_order':False,'descr':'<f4'}",
      "  {\n \"descr\" : \"<f4\" ,\t'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }\n",
  };
  for (const std::string& dict : dicts) {
    for (int major : {1, 2, 3}) {
      const NpyArray array = parse_npy(npy_image(major, dict, data));
      EXPECT_EQ(array.type, NpyType::kF32) << dict;
      EXPECT_EQ(array.shape, (std::vector<std::int64_t>{2, 3})) << dict;
      EXPECT_EQ(array.data.size(), data.size());
      EXPECT_EQ(std::memcmp(array.data.data(), data.data(), data.size()), 0);
    }
  }
}

TEST(Npy, RejectsWhatItCannotRepresentFaithfully) {
  const std::string data = float_bytes({1.f, 2.f});
  expect_rejected(npy_image(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", data),
                  "fortran_order is True");
  expect_rejected(npy_image(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", data),
                  "big-endian dtype '>f4'");
  expect_rejected(npy_image(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", data),
                  "unsupported dtype '<f8'");
  expect_rejected(npy_image(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (8,), }", data),
                  "unsupported dtype '|u1'");
  expect_rejected(
      npy_image(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data),
      "structured dtypes are not supported");
}

TEST(Npy, RejectsDataOfTheWrongLength) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  expect_rejected(npy_image(1, dict, float_bytes({1.f})),
                  "truncated: shape (2,) of float32 needs 8 data bytes");
  expect_rejected(npy_image(1, dict, float_bytes({1.f, 2.f, 3.f})),
                  "trailing data: shape (2,) of float32 needs 8 data bytes, the file has 12");
  expect_rejected(npy_image(1, dict, float_bytes({1.f, 2.f})) + "x", "the file has 9");
}

TEST(Npy, RejectsBrokenPreambles) {
  expect_rejected("", "empty file");
  expect_rejected("\x93NUM", "ends inside the magic string");
  expect_rejected("PK\x03\x04 a zip file, as np.savez writes", "not a .npy file");
  expect_rejected("just some text that is long enough", "not a .npy file");
  expect_rejected(std::string("\x93NUMPY\x01", 7), "ends before the format version");
  expect_rejected(std::string("\x93NUMPY\x01\x00\x50", 9), "ends inside the header length");
  expect_rejected(std::string("\x93NUMPY\x04\x00\x10\x00", 10) + std::string(16, ' '),
                  "unsupported .npy format version 4.0");
  expect_rejected(std::string("\x93NUMPY\x01\x00\x50\x00{'descr'", 17),
                  "ends inside the 80-byte header");
  expect_rejected(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12),
                  "header length 2147483647 is implausibly large");
}

TEST(Npy, RejectsMalformedHeaderDicts) {
  const std::string data = float_bytes({1.f, 2.f});
  const std::pair<std::string, std::string> cases[] = {
      {"garbage\x01\xff", "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False}", "must have the keys"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
       "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
       "unexpected key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "must be True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
       "a 1-d shape must be written (n,)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "expected '('"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'a')}", "tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       "dimension too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
       "is too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} trailing", "unexpected text after"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", "expected ':'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "expected '}'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", "expected '}'"},
  };
  for (const auto& [dict, reason] : cases) {
    SCOPED_TRACE(dict);
    expect_rejected(npy_image(1, dict, data), reason);
  }
}

TEST(Npy, AHugeDeclaredShapeIsRejectedBeforeAllocating) {
  // 2^40 floats would be 4 TiB: the length check must come first, or this test dies of bad_alloc.
  expect_rejected(
      npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", "abcd"),
      "needs 4398046511104 data bytes, the file has 4");
}

TEST(Npy, DataBeyondTheCallersBoundIsRejectedBeforeAllocating) {
  const fs::path path = temp_file("bounded.npy");
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  write_npy(path, NpyType::kF32, std::vector<std::int64_t>{2, 3}, values.data());
  EXPECT_EQ(read_npy(path, 24).numel(), 6);  // exactly the bound
  try {
    read_npy(path, 23);
    ADD_FAILURE() << "read_npy read 24 bytes of data past a bound of 23";
  } catch (const NpyError& e) {
    EXPECT_STREQ(e.what(),
                 "its header declares float32 (2, 3), 24 bytes of data, where at most 23 are "
                 "expected");
  }
}

TEST(Npy, EveryTruncationAndHeaderByteFlipIsRejectedCleanly) {
  const std::vector<float> values{1.f, 2.f, 3.f, 4.f, 5.f, 6.f};
  const fs::path path = temp_file("mutated.npy");
  write_npy(path, NpyType::kF32, std::vector<std::int64_t>{2, 3}, values.data());
  const std::string valid = read_bytes(path);
  for (std::size_t n = 0; n < valid.size(); ++n)
    EXPECT_THROW(parse_npy(valid.substr(0, n)), NpyError) << n;
  // A flipped header byte either still parses (spacing, padding) or throws NpyError; never more.
  const std::size_t header_end = valid.size() - values.size() * sizeof(float);
  for (std::size_t i = 0; i < header_end; ++i) {
    for (unsigned char bit : {0x01, 0x20, 0x80}) {
      std::string mutated = valid;
      mutated[i] = static_cast<char>(mutated[i] ^ bit);
      try {
        const NpyArray array = parse_npy(mutated);
        EXPECT_EQ(array.data.size(),
                  static_cast<std::size_t>(array.numel()) * npy_type_size(array.type));
      } catch (const NpyError&) {
      }
    }
  }
}

TEST(Npy, ReportsFilesThatCannotBeRead) {
  try {
    read_npy(temp_file("does-not-exist.npy"));
    ADD_FAILURE() << "read a missing file";
  } catch (const NpyError& e) {
    EXPECT_STREQ(e.what(), "no such file");
  }
  try {
    read_npy(temp_file("x").parent_path());
    ADD_FAILURE() << "read a directory";
  } catch (const NpyError& e) {
    EXPECT_STREQ(e.what(), "it is a directory");
  }
  const std::vector<float> one{1.f};
  EXPECT_THROW(write_npy(temp_file("no-such-dir") / "x.npy", NpyType::kF32,
                         std::vector<std::int64_t>{1}, one.data()),
               NpyError);
}

TEST(Float16, EveryValueRoundTripsThroughF32) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = f16_to_f32(static_cast<f16_t>(h));
    const bool is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (is_nan) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << h;
    } else {
      EXPECT_EQ(f32_to_f16(f), h) << std::hex << h;
    }
  }
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_f32(0x0001), 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x0400), 0x1p-14f);  // smallest normal
  EXPECT_EQ(f16_to_f32(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(f16_to_f32(0x8000)));
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);     // overflow to Inf
  EXPECT_EQ(f32_to_f16(65519.f), 0x7bff);  // just below the rounding boundary to Inf
  EXPECT_EQ(f32_to_f16(65520.f), 0x7c00);
  EXPECT_EQ(f32_to_f16(1e-9f), 0x0000);       // underflow to zero
  EXPECT_EQ(f32_to_f16(-0x1p-25f), 0x8000);   // exactly half the smallest subnormal: ties to even 0
  EXPECT_EQ(f32_to_f16(0x1.8p-24f), 0x0002);  // 1.5 units: ties to even 2
}

TEST(Float16, MidpointsRoundToEven) {
  // Between consecutive finite float16 values the midpoint is exact in f32 and must round to the
  // neighbour with an even mantissa; points just off the midpoint round to the nearer one.
  for (std::uint32_t h = 0; h < 0x7bff; ++h) {
    const float lo = f16_to_f32(static_cast<f16_t>(h)), hi = f16_to_f32(static_cast<f16_t>(h + 1));
    const float mid = lo + (hi - lo) / 2;
    const std::uint32_t even = (h & 1) == 0 ? h : h + 1;
    ASSERT_EQ(f32_to_f16(mid), even) << std::hex << h;
    ASSERT_EQ(f32_to_f16(std::nextafter(mid, lo)), h) << std::hex << h;
    ASSERT_EQ(f32_to_f16(std::nextafter(mid, hi)), h + 1) << std::hex << h;
    ASSERT_EQ(f32_to_f16(-mid), 0x8000 | even) << std::hex << h;
  }
}

}  // namespace
}  // namespace kbench
