// What kbench does before every timed call, the same whichever side is called and whichever side
// ran before it, so that no call inherits a state the other side left behind.
//
// What one call can leave to the next on the same cores, and what the preamble does about it:
//  - Cache lines. The other side's outputs are flushed from every cache level (clflushopt); then
//    kbench, on the worker's first CPU, writes the called side's outputs (the poison that makes an
//    unwritten element fail) and reads every line of the shared inputs. Each call so starts with
//    its inputs and outputs as warm as one pass over them leaves them, as a kernel called in a loop
//    on the same tensors finds them, and with nothing of the other side's outputs. (Flushing
//    everything instead, cold from DRAM, made 8p's baseline 25% slower and 13p's 5%.)
//  - The core's frequency licence after wide-vector work: measured on an AMX Xeon (docs/
//    evaluation.md), scalar code ran 10% slower for 1.1-1.2 ms after a burst of AVX-512 FMAs (no
//    effect after AMX tile products). Whatever ran last on the core (the other side's call, or
//    kbench drawing the next inputs with AVX-512 arithmetic), every call starts after kSettleMs of
//    kbench spinning there; spinning, not sleeping, because a halted virtual CPU took 0.1-0.2 ms to
//    wake, which every call then lost off-CPU.
//  - Whatever remains (private buffers of a kernel still in a cache, TLB entries) is measured
//    instead: EvalResult's order effect compares the pairs by which side went first; where the
//    two orders differ beyond chance, the result reports the order nearer 1.0 and is unstable
//    unless both orders make the same claim (harness/noise.h, reported_estimate).
#pragma once

#include <span>

#include "harness/shared_tensors.h"
#include "kbench/kernel.h"

namespace kbench {

// The spin before every timed call: longer than the frequency licence lasts.
constexpr double kSettleMs = 2.0;

// Writes back and invalidates every cache line of the tensors' data, in every cache of the machine.
void evict_from_caches(std::span<const kb_tensor> tensors);

// Writes back every dirty cache line of the tensors' data, leaving it cached where the CPU can
// (clwb; clflushopt or clflush elsewhere). For freshly drawn inputs, so that the first call after
// the draw does not pay write-backs the second never meets.
void write_back(std::span<const kb_tensor> tensors);

// Reads one word of every cache line of the tensors' data.
void touch_for_reading(std::span<const kb_tensor> tensors);

// The preamble of a timed call of the side whose outputs are `own`: `other` (null for a one-sided
// run) flushed, `own` poisoned, `inputs` read, then kSettleMs of spinning. The calling thread must
// run on the worker's first CPU (the evaluator pins it there for the timing phase), for the warm
// lines and the settled licence to be that core's.
void settled_call_preamble(SharedTensors& own, std::span<const kb_tensor> inputs,
                           const SharedTensors* other);

}  // namespace kbench
