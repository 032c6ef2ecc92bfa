// What kbench does before every timed call, the same whichever side is called and whichever side
// ran before it, so that neither side's call inherits a state the other left behind.
//
// What one call can leave to the next on the same cores, and what the preamble does about it:
//  - Cache lines of the shared inputs and of both output arenas (the inputs freshly written by
//    kbench, the last call's outputs, kbench's check of them): every line of all three is flushed
//    from every cache level (clflushopt), so each call starts with its inputs and outputs in DRAM.
//  - The core's frequency licence after wide-vector work: measured on an AMX Xeon (docs/
//    evaluation.md), scalar code ran 10% slower for 1.1-1.2 ms after a burst of AVX-512 FMAs (no
//    effect after AMX tile products). A side ending its call with such a burst slowed the other
//    side's next call; so did kbench's own vectorized output check. The preamble ends with
//    kSettleMs of the worker's cores idle, longer than that licence lasts.
//  - Whatever remains (private buffers of a kernel still in L2, TLB entries, pages the kernel
//    touched) is measured rather than removed: EvalResult's order effect splits the speedup by
//    which side went first in a pair, and a split beyond chance makes the result unstable.
#pragma once

#include <span>

#include "kbench/kernel.h"

namespace kbench {

// Idle time between the end of kbench's own work and the start of a timed call.
constexpr double kSettleMs = 3.0;

// Writes back and invalidates every cache line of the tensors' data, in every cache of the machine.
void evict_from_caches(std::span<const kb_tensor> tensors);

// Sleeps kSettleMs.
void settle_before_call();

}  // namespace kbench
