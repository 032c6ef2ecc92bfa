"""Runs a kbench_jax program on a `kbench export` directory: writes its outputs and times it.

    python -m kbench_jax.runner DIR [--warmup 5] [--iters 50] [--no-timing] [--json]

Reads DIR/workload.json and the input .npy files (bf16 inputs are exported as exact f32 and cast to
jnp.bfloat16 here, as the manifest declares), runs the jitted program once, writes each output as
DIR/<output>.npy in float32 (the layout `kbench check --outputs DIR` reads; docs/interop.md), then
times the call: --warmup untimed calls after the compiling one, then --iters calls, each timed
around the call and block_until_ready with time.perf_counter. The inputs are placed on the device
once and reused by every call, as JAXBench times a jitted program. Exit status: 0 on success, 1 on
any failure, with one line `kbench_jax: error: ...` on stderr.

Each call's time is adjusted as `kbench run` adjusts its baseline's (src/harness/noise.h): wall time
minus the run-queue wait of the process's busiest thread, floored at its CPU time (one core), read
from /proc/self/task/*/schedstat around the call. On a shared machine that takes out the time other
processes held the core; median_ms and min_ms are of adjusted times, wall_median_ms of wall times.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


class RunnerError(Exception):
    """A failure reported as one line."""


def load_inputs(directory, manifest, jnp):
    """The inputs in call order, as device arrays of the workload's dtypes."""
    dtypes = {"bf16": jnp.bfloat16, "f32": jnp.float32, "i32": jnp.int32}
    arrays = []
    for spec in manifest["inputs"]:
        path = os.path.join(directory, spec["file"])
        data = np.load(path, allow_pickle=False)
        if list(data.shape) != list(spec["shape"]):
            raise RunnerError(f"{path} has shape {data.shape}, workload.json says {spec['shape']}")
        if spec["dtype"] not in dtypes:
            raise RunnerError(f"input {spec['name']} has unsupported dtype {spec['dtype']}")
        arrays.append(jnp.asarray(data).astype(dtypes[spec["dtype"]]))
    order = [spec["name"] for spec in manifest["inputs"]]
    if manifest.get("input_order", order) != order:
        raise RunnerError("workload.json: inputs and input_order disagree")
    return arrays


def write_outputs(directory, manifest, module, outputs):
    """Writes each output as float32 DIR/<name>.npy after checking names and shapes."""
    expected = {spec["name"]: spec for spec in manifest["outputs"]}
    if tuple(expected) != tuple(module.OUTPUTS) or len(outputs) != len(module.OUTPUTS):
        raise RunnerError(f"program outputs {module.OUTPUTS} but workload.json lists {tuple(expected)}")
    for name, value in zip(module.OUTPUTS, outputs):
        array = np.asarray(value.astype("float32"))
        shape = list(expected[name]["shape"])
        if list(array.shape) != shape:
            raise RunnerError(f"output {name} has shape {array.shape}, workload.json says {shape}")
        path = os.path.join(directory, f"{name}.npy")
        stale = os.path.join(directory, f"{name}.bf16.npy")
        if os.path.exists(stale):
            os.remove(stale)  # check refuses to choose between OUT.npy and OUT.bf16.npy
        np.save(path, np.ascontiguousarray(array, dtype="<f4"))


def task_schedstats():
    """{tid: (run_ns, wait_ns)} for every thread of this process; {} without CONFIG_SCHED_INFO."""
    stats = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return stats
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as f:
                run_ns, wait_ns = f.read().split()[:2]
            stats[tid] = (int(run_ns), int(wait_ns))
        except (OSError, ValueError):
            continue  # the thread ended, or no schedstat
    return stats


def adjusted_ms(wall_ms, before, after, threads=1):
    """kbench's call_timing rule: min(wall, max(wall - busiest thread's wait, cpu / threads))."""
    if not before or not after:
        return wall_ms
    deltas = [(run - before.get(tid, (0, 0))[0], wait - before.get(tid, (0, 0))[1])
              for tid, (run, wait) in after.items()]
    cpu_ms = sum(run for run, _ in deltas) / 1e6
    critical_wait_ms = max(deltas)[1] / 1e6  # the thread that ran longest
    return min(wall_ms, max(wall_ms - critical_wait_ms, cpu_ms / threads))


def time_calls(program, inputs, warmup, iters):
    """(wall ms, adjusted ms) of each of `iters` calls after `warmup` untimed ones, and the
    process's mean CPU time per timed call."""
    import jax

    for _ in range(warmup):
        jax.block_until_ready(program(*inputs))
    wall, adjusted = [], []
    cpu_start = time.process_time()
    for _ in range(iters):
        before = task_schedstats()
        start = time.perf_counter()
        jax.block_until_ready(program(*inputs))
        wall_ms = (time.perf_counter() - start) * 1e3
        wall.append(wall_ms)
        adjusted.append(adjusted_ms(wall_ms, before, task_schedstats()))
    cpu_ms_per_call = (time.process_time() - cpu_start) * 1e3 / iters
    return wall, adjusted, cpu_ms_per_call


def run(args):
    manifest_path = os.path.join(args.directory, "workload.json")
    try:
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise RunnerError(f"cannot read {manifest_path}: {e}") from e

    import jax
    import jax.numpy as jnp

    from kbench_jax import PROGRAMS

    module = PROGRAMS.get(manifest.get("name"))
    if module is None:
        raise RunnerError(f"no JAX program for workload {manifest.get('name')!r} "
                          f"(have: {', '.join(PROGRAMS)})")
    program = module.build(manifest.get("params", {}))
    inputs = load_inputs(args.directory, manifest, jnp)

    start = time.perf_counter()
    outputs = jax.block_until_ready(program(*inputs))  # compiles
    first_call_ms = (time.perf_counter() - start) * 1e3
    write_outputs(args.directory, manifest, module, outputs)

    report = {
        "workload": manifest["name"],
        "size": manifest.get("size"),
        "seed": manifest.get("seed"),
        "jax_version": jax.__version__,
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "cpu_affinity": sorted(os.sched_getaffinity(0)),
        "first_call_ms": first_call_ms,
    }
    if not args.no_timing:
        wall, adjusted, cpu_ms_per_call = time_calls(program, inputs, args.warmup, args.iters)
        report.update(warmup=args.warmup, iters=args.iters, median_ms=statistics.median(adjusted),
                      min_ms=min(adjusted), mean_ms=statistics.fmean(adjusted),
                      wall_median_ms=statistics.median(wall), wall_min_ms=min(wall),
                      cpu_ms_per_call=cpu_ms_per_call, accounted=bool(task_schedstats()),
                      samples_ms=adjusted, wall_samples_ms=wall)
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kbench_jax.runner", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", help="a `kbench export` directory")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls after compiling")
    parser.add_argument("--iters", type=int, default=50, help="timed calls")
    parser.add_argument("--no-timing", action="store_true", help="only write the outputs")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON line")
    args = parser.parse_args(argv)
    if args.iters < 1 or args.warmup < 0:
        parser.error("--iters must be at least 1, --warmup at least 0")
    try:
        report = run(args)
    except RunnerError as e:
        print(f"kbench_jax: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a JAX or NumPy failure: still one line
        print(f"kbench_jax: error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
              file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report))
    else:
        line = f"{report['workload']} size={report['size']} seed={report['seed']} wrote outputs"
        if "median_ms" in report:
            line += f"; median {report['median_ms']:.3f} ms, min {report['min_ms']:.3f} ms " \
                    f"({report['iters']} iters)"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
