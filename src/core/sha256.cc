// SHA-256 through OpenSSL's EVP interface, which picks the SHA-NI / AVX2 implementation at runtime.
#include "core/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace kbench {

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &digest_len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: EVP_Digest failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * digest_len, '\0');
  for (unsigned int i = 0; i < digest_len; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace kbench
