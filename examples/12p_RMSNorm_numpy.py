#!/usr/bin/env python3
"""12p_RMSNorm in NumPy, checked by kbench without the C ABI (docs/interop.md).

Reads the inputs `kbench export --workload 12p --out DIR` wrote and saves DIR/out.npy for
`kbench check --workload 12p --outputs DIR`. Usage: python3 12p_RMSNorm_numpy.py DIR
"""
import json
import sys

import numpy as np


def bf16(a):
    """Rounds float32 values to the nearest bfloat16 (ties to even), kept as float32.

    NumPy has no bfloat16: keeping the top 16 bits of a float32 after a round-to-nearest-even add is
    exactly what a bf16 cast does (no NaN can occur here).
    """
    bits = np.asarray(a, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


d = sys.argv[1]
x = np.load(f"{d}/x.npy")  # (B, S, D) float32 holding bf16 values
scale = np.load(f"{d}/scale.npy")  # (D,)
eps = np.float32(json.load(open(f"{d}/workload.json"))["params"]["epsilon"])

# The spec: statistics in f32, the normalized value cast to bf16, times scale, cast to bf16.
mean_sq = np.mean(np.square(x), axis=-1, keepdims=True)
out = bf16(bf16(x * (1 / np.sqrt(mean_sq + eps))) * scale)
np.save(f"{d}/out.npy", out)
print(f"wrote {d}/out.npy {out.dtype} {out.shape}")
