// memfd-backed tensor arenas with page-aligned tensors (so read-only protection is exact per
// tensor).
#include "harness/shared_tensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace kbench {
namespace {

constexpr std::size_t kPage = 4096;

std::size_t layout(const std::vector<TensorSpec>& specs, std::vector<std::size_t>& offsets) {
  std::size_t total = 0;
  offsets.clear();
  for (const TensorSpec& s : specs) {
    offsets.push_back(total);
    total += (std::max<std::size_t>(s.bytes(), 1) + kPage - 1) / kPage * kPage;
  }
  return std::max(total, kPage);
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

SharedTensors SharedTensors::create(const std::vector<TensorSpec>& specs, const char* debug_name,
                                    bool writable_only_here) {
  SharedTensors t;
  t.specs_ = specs;
  t.bytes_ = layout(specs, t.offsets_);
  t.fd_ = memfd_create(debug_name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (t.fd_ < 0) throw_errno("memfd_create");
  if (ftruncate(t.fd_, static_cast<off_t>(t.bytes_)) != 0) throw_errno("ftruncate of tensor arena");
  // Mapped before the write seal: once sealed, no new writable mapping can be made, not even here.
  t.map(true);
  constexpr int kSizeSeals = F_SEAL_SHRINK | F_SEAL_GROW;
  const bool write_sealed =
      writable_only_here && fcntl(t.fd_, F_ADD_SEALS, kSizeSeals | F_SEAL_FUTURE_WRITE) == 0;
  if (!write_sealed && fcntl(t.fd_, F_ADD_SEALS, kSizeSeals) != 0)
    throw_errno("sealing tensor arena");
  if (fcntl(t.fd_, F_ADD_SEALS, F_SEAL_SEAL) != 0) throw_errno("sealing tensor arena");
  return t;
}

bool SharedTensors::sealed_against_writes() const {
  const int seals = fcntl(fd_, F_GET_SEALS);
  return seals >= 0 && (seals & F_SEAL_FUTURE_WRITE) != 0;
}

SharedTensors SharedTensors::attach(int fd, const std::vector<TensorSpec>& specs, bool writable) {
  SharedTensors t;
  t.specs_ = specs;
  t.bytes_ = layout(specs, t.offsets_);
  t.fd_ = fd;
  t.map(writable);
  return t;
}

void SharedTensors::map(bool writable) {
  base_ = mmap(nullptr, bytes_, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd_, 0);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    throw_errno("mmap of tensor arena (" + std::to_string(bytes_) + " bytes)");
  }
  views_.clear();
  for (std::size_t i = 0; i < specs_.size(); ++i)
    views_.push_back(make_view(specs_[i], static_cast<char*>(base_) + offsets_[i]));
}

SharedTensors::SharedTensors(SharedTensors&& other) noexcept {
  *this = std::move(other);
}

SharedTensors& SharedTensors::operator=(SharedTensors&& other) noexcept {
  if (this != &other) {
    this->~SharedTensors();
    fd_ = std::exchange(other.fd_, -1);
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    specs_ = std::move(other.specs_);
    offsets_ = std::move(other.offsets_);
    views_ = std::move(other.views_);
  }
  return *this;
}

SharedTensors::~SharedTensors() {
  if (base_) munmap(base_, bytes_);
  if (fd_ >= 0) close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

void SharedTensors::allocate_alike(SharedTensors& a, SharedTensors& b) {
  if (a.bytes_ != b.bytes_) throw std::invalid_argument("allocate_alike: arenas differ in size");
  auto* pa = static_cast<volatile char*>(a.base_);
  auto* pb = static_cast<volatile char*>(b.base_);
  for (std::size_t offset = 0; offset < a.bytes_; offset += kPage) {
    pa[offset] = 0;
    pb[offset] = 0;
  }
}

void SharedTensors::poison() {
  for (kb_tensor& t : views_) {
    const auto n = static_cast<std::size_t>(kb_numel(&t));
    switch (t.dtype) {
      case KB_BF16: {
        auto* p = static_cast<std::uint16_t*>(t.data);
        std::fill(p, p + n, std::uint16_t{0x7fc0});
        break;
      }
      case KB_F32: {
        auto* p = static_cast<float*>(t.data);
        std::fill(p, p + n, std::nanf(""));
        break;
      }
      case KB_I32: {
        auto* p = static_cast<std::int32_t*>(t.data);
        std::fill(p, p + n, 0x7fffffff);
        break;
      }
    }
  }
}

}  // namespace kbench
