#!/usr/bin/env python3
"""Regenerates the two explicit workload lists from the files that exist, in spec order:
src/workloads/workloads.inc (one KBENCH_WORKLOAD line per workload file) and the PROGRAMS list of
python/kbench_jax/__init__.py. Used when several branches add workloads at once.

    scripts/regen-lists.py [--spec ../shared/spec/workloads.json]
"""
import argparse
import json
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("--spec", default=os.path.join(root, "..", "shared", "spec", "workloads.json"))
args = parser.parse_args()
spec = json.load(open(args.spec))

symbols, modules, missing = [], [], []
wdir = os.path.join(root, "src", "workloads")
pdir = os.path.join(root, "python", "kbench_jax")
for w in spec:
    wid = w["id"]
    found = None
    for f in sorted(os.listdir(wdir)):
        if f.endswith(f"_{wid}.cc"):
            m = re.search(r"^const Workload (k\w+) = \{", open(os.path.join(wdir, f)).read(), re.M)
            if m:
                found = m.group(1)
    if found:
        symbols.append(found)
    else:
        missing.append(wid)
    for f in sorted(os.listdir(pdir)):
        if f.endswith(f"_{wid}.py"):
            modules.append(f[:-3])

inc = ("// The workload list, in spec order. Each line names the `const Workload` defined in its own file.\n"
       "// Ids never change; adding a workload is one file plus one line here.\n")
inc += "".join(f"KBENCH_WORKLOAD({s})\n" for s in symbols)
open(os.path.join(wdir, "workloads.inc"), "w").write(inc)

init_path = os.path.join(pdir, "__init__.py")
init = open(init_path).read()
doc_end = init.index('"""', 3) + 3
body = "\n\nfrom kbench_jax import (\n" + "".join(f"    {m},\n" for m in sorted(modules)) + ")\n\n"
body += "# One explicit list, in `kbench list` order.\nPROGRAMS = {\n    m.NAME: m\n    for m in (\n"
body += "".join(f"        {m},\n" for m in modules) + "    )\n}\n"
open(init_path, "w").write(init[:doc_end] + body)
print(f"{len(symbols)} workloads, {len(modules)} JAX programs; missing: {' '.join(missing) or 'none'}")
