"""kbench_jax.original: programs laid out as JAXBench's run unmodified on kbench exports of any size,
and `kbench check` judges them. Needs jax; run by tests/originals_test.sh.

Environment: KBENCH (the kbench executable, required); KBENCH_ORIGINALS (optional): a directory
holding JAXBench's own programs as <workload name>/baseline.py (a checkout's JAXBench/benchmark);
with it, every original runs at smoke size and is checked too.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from kbench_jax import original  # noqa: E402

KBENCH = os.environ.get("KBENCH", "")
PROGRAMS = os.path.join(HERE, "originals")

# Originals that do not compute kbench's workload on every smoke seed, for reasons
# docs/workloads.md gives: 11p's dynamic_slice clamps a window that starts within
# max_expert_size rows of the end (the original's own inputs never do); 26k normalizes single
# elements (kbench normalizes each row's features, a non-degeneracy change).
DIFFER_IN_MEANING = {"11p_Megablox_GMM", "26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply"}


def export(workload, directory, size="smoke", seed=7):
    subprocess.run([KBENCH, "export", "-w", workload, "--size", size, "--seed", str(seed),
                    "--out", directory, "--force"], check=True, capture_output=True)
    with open(os.path.join(directory, "workload.json"), encoding="utf-8") as f:
        return json.load(f)


def check(workload, directory, size="smoke"):
    out = subprocess.run([KBENCH, "check", "-w", workload, "--size", size, "--outputs", directory,
                          "--json", "--no-record"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


class Original(unittest.TestCase):
    def setUp(self):
        if not KBENCH:
            self.skipTest("KBENCH (the kbench executable) not set")
        self.scratch = tempfile.TemporaryDirectory()
        self.dir = self.scratch.name

    def tearDown(self):
        self.scratch.cleanup()

    def test_config_dict_and_local_constants_follow_the_export(self):
        for size in ("smoke", "cpu"):
            manifest = export("29k", self.dir, size)
            report = original.run(os.path.join(PROGRAMS, "group_norm_program.py"), self.dir)
            changed = {(c["where"], c["name"]): c["new"] for c in report["changes"]}
            config = manifest["config"]
            self.assertEqual(changed[("workload()", "num_groups")], config["num_groups"])
            self.assertEqual(changed[("workload()", "out_features")], config["out_features"])
            self.assertEqual(changed[("CONFIG", "batch_size")], config["batch_size"])
            verdict = check("29k", self.dir, size)
            self.assertEqual(verdict["status"], "correct", verdict.get("error"))

    def test_a_wrong_constant_is_caught(self):
        manifest = export("29k", self.dir)
        groups = manifest["config"]["num_groups"]
        manifest["config"]["num_groups"] = 1  # a configuration the inputs were not drawn for
        with open(os.path.join(self.dir, "workload.json"), "w", encoding="utf-8") as f:
            json.dump(manifest, f)
        original.run(os.path.join(PROGRAMS, "group_norm_program.py"), self.dir)
        self.assertNotEqual(groups, 1)
        self.assertEqual(check("29k", self.dir)["status"], "incorrect")

    def test_module_constants_and_what_derives_from_them(self):
        module, changes = original.load_program(
            os.path.join(PROGRAMS, "scenario_program.py"), {"head_dim": 37},
            {"ACTIVE_Q_LENS": [1, 1, 19]})
        self.assertEqual(module.ACTIVE_Q_LENS, (1, 1, 19))
        self.assertEqual(module.NUM_ACTIVE_SEQS, 3)
        self.assertEqual(module.CONFIG["head_dim"], 37)
        self.assertEqual(module.CONFIG["max_num_batched_tokens"], 4096)  # not in the export
        self.assertEqual({c[2] for c in changes}, {"ACTIVE_Q_LENS", "head_dim"})

    def test_a_python_int_argument_comes_from_the_params(self):
        manifest = export("11p", self.dir)
        report = original.run(os.path.join(PROGRAMS, "grouped_matmul_program.py"), self.dir)
        self.assertEqual(report["static_args"], [3])
        self.assertGreater(manifest["params"]["max_expert_size"], 0)
        verdict = check("11p", self.dir)
        self.assertEqual(verdict["status"], "correct", verdict.get("error"))

    def test_an_export_without_config_is_refused(self):
        manifest = export("29k", self.dir)
        del manifest["config"]
        with open(os.path.join(self.dir, "workload.json"), "w", encoding="utf-8") as f:
            json.dump(manifest, f)
        with self.assertRaises(original.OriginalError):
            original.run(os.path.join(PROGRAMS, "group_norm_program.py"), self.dir)


class JaxBenchOriginals(unittest.TestCase):
    """JAXBench's own programs, when KBENCH_ORIGINALS points at them."""

    def test_every_original_runs_at_smoke_size_and_passes_where_it_means_the_same(self):
        root = os.environ.get("KBENCH_ORIGINALS", "")
        if not KBENCH or not root:
            self.skipTest("KBENCH_ORIGINALS not set (a checkout's JAXBench/benchmark directory)")
        listed = json.loads(subprocess.run([KBENCH, "list", "--json"], check=True,
                                           capture_output=True, text=True).stdout)
        names = [w["name"] for w in listed
                 if os.path.exists(os.path.join(root, w["name"], "baseline.py"))]
        self.assertTrue(names, f"no <workload name>/baseline.py under {root}")
        with tempfile.TemporaryDirectory() as directory:
            for name in names:
                with self.subTest(workload=name):
                    export(name, directory)
                    original.run(os.path.join(root, name, "baseline.py"), directory)
                    status = check(name, directory)["status"]
                    if name not in DIFFER_IN_MEANING:
                        self.assertEqual(status, "correct")


if __name__ == "__main__":
    unittest.main(verbosity=2)
