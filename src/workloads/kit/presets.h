// A workload's three size presets as one table: the shapes `kbench ... --size` picks from.
#pragma once

#include "workloads/workload.h"

namespace kbench {

template <class Shape>
struct Presets {
  Shape smoke;  // for tests and the sanitizer builds: small, with extents off the tile sizes
  Shape cpu;    // one core in tens of milliseconds (docs/workloads.md gives each reason)
  Shape full;   // the original program's configuration (the spec's config_full)

  constexpr const Shape& at(Size size) const {
    switch (size) {
      case Size::kSmoke:
        return smoke;
      case Size::kCpu:
        return cpu;
      case Size::kFull:
        break;
    }
    return full;
  }
};

}  // namespace kbench
