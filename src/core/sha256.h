// SHA-256 of a byte string as lowercase hex: keys for the compile cache and the machine id.
#pragma once

#include <string>
#include <string_view>

namespace kbench {

// 64 lowercase hex characters. Throws std::runtime_error if OpenSSL fails (out of memory).
std::string sha256_hex(std::string_view data);

}  // namespace kbench
