"""Runs original JAXBench programs on kbench exports of many seeds and checks each with kbench.

    python -m kbench_jax.check_originals --originals DIR [--kbench PATH] [--size smoke]
        [--seeds 20] [--first-seed 1] [--workdir DIR] [--json FILE] [WORKLOAD ...]

DIR holds the originals as JAXBench lays them out: DIR/<workload name>/baseline.py (for example a
checkout's JAXBench/benchmark). For each workload (default: every one DIR has), each seed: `kbench
export --bf16-program`, the original run unmodified on it (kbench_jax.original; its module loaded
and jitted once per workload), `kbench check`, and how far the original's outputs are from the
workload's bf16 program (kbench's emulation of the original's arithmetic): the largest difference
and the share of elements that agree exactly. Prints one line per workload and a table; --json
writes every seed's result. Exit status 0 when it ran to the end, whatever the verdicts.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from kbench_jax import original


def kbench_list(kbench):
    out = subprocess.run([kbench, "list", "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def export(kbench, workload, size, seed, directory):
    subprocess.run([kbench, "export", "-w", workload, "--size", size, "--seed", str(seed), "--out",
                    directory, "--force", "--bf16-program"], check=True, capture_output=True)


def check(kbench, workload, size, directory):
    out = subprocess.run([kbench, "check", "-w", workload, "--size", size, "--outputs", directory,
                          "--json", "--no-record"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def agreement(directory, manifest):
    """How close the original's outputs are to the bf16 program's: (max |diff|, share of elements
    equal, relative L2 distance), over all outputs; Nones without a bf16 program."""
    worst, equal, total, diff_sq, ref_sq = 0.0, 0, 0, 0.0, 0.0
    for spec in manifest["outputs"]:
        ours = os.path.join(directory, "bf16_program", f"{spec['name']}.npy")
        if not os.path.exists(ours):
            return None, None, None
        a = np.load(os.path.join(directory, f"{spec['name']}.npy")).astype(np.float64)
        b = np.load(ours).astype(np.float64)
        worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
        equal += int(np.sum(a == b))
        total += a.size
        diff_sq += float(np.sum((a - b) ** 2))
        ref_sq += float(np.sum(b ** 2))
    rel_l2 = (diff_sq / ref_sq) ** 0.5 if ref_sq > 0 else (0.0 if diff_sq == 0 else float("inf"))
    return worst, equal / max(total, 1), rel_l2


def run_workload(args, name, workdir):
    """Every seed of one workload: a list of per-seed dicts, or one dict with the error."""
    import jax

    program = os.path.join(args.originals, name, "baseline.py")
    directory = os.path.join(workdir, name)
    results, fn = [], None
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        export(args.kbench, name, args.size, seed, directory)
        with open(os.path.join(directory, "workload.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        try:
            if fn is None:  # the configuration is the same for every seed of a size
                module, changes = original.load_program(
                    program, manifest["config"], manifest.get("scenario_constants", {}))
                inputs = original.load_inputs(directory, manifest)
                call, static = original.call_arguments(module, manifest, inputs)
                eager = getattr(module, "_skip_jit", False)
                fn = module.workload if eager else jax.jit(module.workload, static_argnums=static)
            inputs = original.load_inputs(directory, manifest)
            call = inputs + call[len(inputs):]
            original.write_outputs(directory, manifest, jax.block_until_ready(fn(*call)))
        except Exception as e:  # the original cannot run on this export: one line says why
            message = str(e).splitlines()[0] if str(e) else ""
            return {"error": f"{type(e).__name__}: {message}"[:300]}
        verdict = check(args.kbench, name, args.size, directory)
        worst, equal, distance = agreement(directory, manifest)
        results.append({"seed": seed, "status": verdict["status"],
                        "rel_l2": verdict["correctness"]["rel_l2_err"],
                        "max_abs": verdict["correctness"]["max_abs_err"],
                        "detail": verdict.get("error", ""),
                        "vs_bf16_program_max_abs": worst, "vs_bf16_program_equal": equal,
                        "vs_bf16_program_rel_l2": distance})
    return {"seeds": results, "changes": [list(c) for c in changes]}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kbench_jax.check_originals", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", help="names or ids (default: all DIR has)")
    parser.add_argument("--originals", required=True, help="DIR/<workload name>/baseline.py")
    parser.add_argument("--kbench", default="build/src/kbench")
    parser.add_argument("--size", default="smoke")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--workdir", help="where the exports go (default: a temporary directory)")
    parser.add_argument("--json", help="write every seed's result here")
    args = parser.parse_args(argv)

    listed = kbench_list(args.kbench)
    wanted = set(args.workloads)
    names = [w["name"] for w in listed
             if (not wanted or w["name"] in wanted or w["id"] in wanted)
             and os.path.exists(os.path.join(args.originals, w["name"], "baseline.py"))]
    report = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            report[name] = run_workload(args, name, args.workdir or scratch)
            r = report[name]
            if "error" in r:
                line = f"does not run: {r['error']}"
            else:
                passed = sum(s["status"] == "correct" for s in r["seeds"])
                worst = max(s["rel_l2"] for s in r["seeds"])
                near = max((s["vs_bf16_program_max_abs"] or 0) for s in r["seeds"])
                equal = min((s["vs_bf16_program_equal"] or 0) for s in r["seeds"])
                distance = max((s["vs_bf16_program_rel_l2"] or 0) for s in r["seeds"])
                line = (f"{passed}/{len(r['seeds'])} correct, worst rel-L2 {worst:.2e}; vs bf16 "
                        f"program: rel-L2 {distance:.2e}, max |diff| {near:.3g}, >= {equal:.1%} "
                        "of elements equal")
                failed = [s for s in r["seeds"] if s["status"] != "correct"]
                if failed:
                    line += f"; first failure (seed {failed[0]['seed']}): {failed[0]['detail'][:160]}"
            print(f"{name} {args.size}: {line}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"size": args.size, "results": report}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
