// The per-process cache the oneDNN GEMM and convolution paths keep their primitives in: one per
// configuration key, made on first use and reused by every later call.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace kbench::ops::detail {

template <class Entry>
class PrimitiveCache {
 public:
  // The CPU engine every cached primitive is made for.
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};

  // The entry for `key`, made by make() (returning std::optional<Entry>) on first use, under the
  // cache's lock: concurrent first calls with one key make it once. nullopt, when oneDNN cannot
  // create that configuration on this CPU, is remembered too, so oneDNN is asked once.
  template <class Make>
  std::optional<Entry> find_or_make(const std::string& key, Make make) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) it = entries_.emplace(key, make()).first;
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::optional<Entry>> entries_;
};

}  // namespace kbench::ops::detail
