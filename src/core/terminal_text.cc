#include "core/terminal_text.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace kbench {

std::string terminal_safe(std::string_view text) {
  std::string safe;
  safe.reserve(text.size());
  const auto escape = [&safe](unsigned char byte) {
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02x", byte);
    safe += hex;
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && byte != '\t') || byte == 0x7f)
        escape(byte);
      else
        safe += static_cast<char>(byte);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (no overlongs, surrogates or code points past U+10FFFF) passes
    // whole; anything else is escaped a byte at a time.
    const std::size_t length = byte >= 0xc2 && byte <= 0xdf   ? 2
                               : byte >= 0xe0 && byte <= 0xef ? 3
                               : byte >= 0xf0 && byte <= 0xf4 ? 4
                                                              : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k)
      valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (valid && length >= 3) {
      const auto second = static_cast<unsigned char>(text[i + 1]);
      valid = !(byte == 0xe0 && second < 0xa0) && !(byte == 0xed && second >= 0xa0) &&
              !(byte == 0xf0 && second < 0x90) && !(byte == 0xf4 && second >= 0x90);
    }
    if (!valid) {
      escape(byte);
      ++i;
      continue;
    }
    safe.append(text.substr(i, length));
    i += length;
  }
  return safe;
}

std::string clip_line(std::string_view line, std::size_t max_bytes, std::size_t unread_bytes) {
  if (line.size() <= max_bytes && unread_bytes == 0) return std::string(line);
  std::size_t cut = std::min(max_bytes, line.size());
  while (cut > 0 && cut < line.size() && (static_cast<unsigned char>(line[cut]) & 0xc0) == 0x80)
    --cut;
  return std::string(line.substr(0, cut)) + " [... " +
         std::to_string(line.size() - cut + unread_bytes) + " more bytes]";
}

}  // namespace kbench
