"""Runs an original JAXBench program, unmodified, on a `kbench export` directory of any size.

    python -m kbench_jax.original PROGRAM.py DIR [--out OUTDIR] [--no-jit] [--json]

PROGRAM.py is a JAXBench `baseline.py` (or any file with the same layout: a `workload(*inputs)`
function and its constants). The file is not changed on disk. Its constants are set to the export's
before the module runs, from workload.json's "config" (every key of the spec's config_full, at the
export's size) and "scenario_constants" (7p's module-level lengths):

  - the module-level `CONFIG = {...}` dict: each key the export names gets the export's value;
  - a module-level assignment `NAME = ...` where NAME is a scenario constant (ACTIVE_Q_LENS);
  - inside functions, an assignment of a literal to a name the config has (`num_groups = 64`,
    `stride = 2`): the original's own name for that constant.

Nothing else changes: values computed from these (NUM_ACTIVE_SEQS, max_seq_len) follow, because the
module then runs as written. Every substitution is reported. The inputs are the export's .npy files
in call order, cast to the workload's dtypes (bf16 as jnp.bfloat16, as JAXBench's harness creates
them). A `workload` parameter beyond the inputs (11p's max_expert_size) gets the workload.json param
or config value of that name, as a static argument. The program runs under jax.jit, as JAXBench's
harness runs it (eagerly when the module sets `_skip_jit`, or with --no-jit), and each output is
written as float32 OUTDIR/<output>.npy (default DIR), where `kbench check --outputs` reads it.
Exit status: 0 on success, 1 on any failure, with one line `kbench_jax.original: error: ...`.
"""

import argparse
import ast
import inspect
import json
import os
import sys
import types

import numpy as np

PROG = "kbench_jax.original"


class OriginalError(Exception):
    """A failure reported as one line."""


def literal(value):
    """The AST of a JSON value: a constant, or a tuple for a list (the originals' sequences)."""
    if isinstance(value, list):
        return ast.Tuple(elts=[literal(v) for v in value], ctx=ast.Load())
    if isinstance(value, (bool, int, float, str)):
        return ast.Constant(value=value)
    raise OriginalError(f"cannot express {value!r} as a Python constant")


def literal_value(node):
    """The value of a literal (a constant, possibly negated), or None when the node is not one."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (bool, int, float, str)) else None


class Configure(ast.NodeTransformer):
    """Sets the program's constants to the export's, recording what it changed."""

    def __init__(self, config, scenario):
        self.config = config
        self.scenario = scenario
        self.changes = []  # (line, where, name, old, new)
        self.scope = []

    def record(self, node, where, name, old, new):
        if old != new:
            self.changes.append((node.lineno, where, name, old, new))

    def visit_FunctionDef(self, node):
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node):
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return node
        name = node.targets[0].id
        if not self.scope:
            if name == "CONFIG" and isinstance(node.value, ast.Dict):
                self.configure_dict(node.value)
            elif name in self.scenario:
                old = ast.unparse(node.value)  # source text: an expression, not always a literal
                node.value = ast.copy_location(literal(self.scenario[name]), node.value)
                self.record(node, "module", name, old, ast.unparse(node.value))
            return node
        if name in self.config and literal_value(node.value) is not None:
            old = literal_value(node.value)
            node.value = ast.copy_location(literal(self.config[name]), node.value)
            self.record(node, f"{self.scope[-1]}()", name, old, self.config[name])
        return node

    def configure_dict(self, dict_node):
        present = set()
        for index, (key, value) in enumerate(zip(dict_node.keys, dict_node.values)):
            if isinstance(key, ast.Constant) and key.value in self.config:
                present.add(key.value)
                dict_node.values[index] = ast.copy_location(literal(self.config[key.value]), value)
                self.record(value, "CONFIG", key.value, literal_value(value), self.config[key.value])
        for name in self.config:
            if name not in present:  # a key the spec lists that this version of the file lacks
                dict_node.keys.append(ast.Constant(value=name))
                dict_node.values.append(literal(self.config[name]))
                self.record(dict_node, "CONFIG", name, None, self.config[name])


def load_program(path, config, scenario):
    """The module at `path`, executed with the export's constants; and the list of changes."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except OSError as e:
        raise OriginalError(f"cannot read {path}: {e}") from e
    tree = ast.parse(source, filename=path)
    configure = Configure(config, scenario)
    tree = ast.fix_missing_locations(configure.visit(tree))
    name = "kbench_original_" + os.path.splitext(os.path.basename(path))[0]
    module = types.ModuleType(name)
    module.__file__ = os.path.abspath(path)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    exec(compile(tree, path, "exec"), module.__dict__)  # noqa: S102 - the user's own program
    if not callable(getattr(module, "workload", None)):
        raise OriginalError(f"{path} defines no workload(*inputs) function")
    return module, configure.changes


def load_inputs(directory, manifest):
    """The inputs in call order as jax arrays of the workload's dtypes."""
    import jax.numpy as jnp

    dtypes = {"bf16": jnp.bfloat16, "f32": jnp.float32, "i32": jnp.int32}
    arrays = []
    for spec in manifest["inputs"]:
        data = np.load(os.path.join(directory, spec["file"]), allow_pickle=False)
        if list(data.shape) != list(spec["shape"]):
            raise OriginalError(f"{spec['file']} has shape {data.shape}, workload.json says {spec['shape']}")
        arrays.append(jnp.asarray(data).astype(dtypes[spec["dtype"]]))
    return arrays


def call_arguments(module, manifest, inputs):
    """The positional arguments of workload(): the inputs, then named constants (static)."""
    parameters = list(inspect.signature(module.workload).parameters.values())
    if len(parameters) < len(inputs):
        raise OriginalError(f"workload() takes {len(parameters)} arguments, the export has "
                            f"{len(inputs)} inputs")
    named = {**manifest.get("config", {}), **manifest.get("params", {})}
    args, static = list(inputs), []
    for parameter in parameters[len(inputs):]:
        if parameter.name in named:
            value = named[parameter.name]
            # JSON numbers that are whole and name a count were Python ints in the original.
            args.append(int(value) if isinstance(value, float) and value.is_integer() else value)
            static.append(len(args) - 1)
        elif parameter.default is not inspect.Parameter.empty:
            break
        else:
            raise OriginalError(f"workload() parameter {parameter.name!r} is neither an input nor "
                                "a config or param of workload.json")
    return args, tuple(static)


def write_outputs(out_dir, manifest, result):
    """Each output as float32 OUT_DIR/<name>.npy, after checking count and shapes."""
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    specs = manifest["outputs"]
    if len(outputs) != len(specs):
        raise OriginalError(f"the program returned {len(outputs)} outputs, workload.json lists "
                            f"{len(specs)}")
    written = []
    for spec, value in zip(specs, outputs):
        array = np.asarray(value).astype(np.float32)
        if list(array.shape) != list(spec["shape"]):
            raise OriginalError(f"output {spec['name']} has shape {tuple(array.shape)}, "
                                f"workload.json says {tuple(spec['shape'])}")
        path = os.path.join(out_dir, f"{spec['name']}.npy")
        stale = os.path.join(out_dir, f"{spec['name']}.bf16.npy")
        if os.path.exists(stale):
            os.remove(stale)  # kbench check refuses to choose between OUT.npy and OUT.bf16.npy
        np.save(path, np.ascontiguousarray(array, dtype="<f4"))
        written.append({"name": spec["name"], "path": path, "dtype": str(np.asarray(value).dtype)})
    return written


def run(program, directory, out_dir=None, jit=True):
    """Runs `program` on the export in `directory`; returns a report dict."""
    manifest_path = os.path.join(directory, "workload.json")
    try:
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise OriginalError(f"cannot read {manifest_path}: {e}") from e
    if "config" not in manifest:
        raise OriginalError(f"{manifest_path} has no config (exported by an older kbench?)")
    import jax

    module, changes = load_program(program, manifest["config"],
                                   manifest.get("scenario_constants", {}))
    inputs = load_inputs(directory, manifest)
    args, static = call_arguments(module, manifest, inputs)
    eager = not jit or getattr(module, "_skip_jit", False)
    fn = module.workload if eager else jax.jit(module.workload, static_argnums=static)
    result = jax.block_until_ready(fn(*args))
    written = write_outputs(out_dir or directory, manifest, result)
    return {
        "program": os.path.abspath(program),
        "workload": manifest["name"],
        "size": manifest.get("size"),
        "seed": manifest.get("seed"),
        "jit": not eager,
        "static_args": list(static),
        "changes": [{"line": line, "where": where, "name": name, "old": old, "new": new}
                    for line, where, name, old, new in changes],
        "outputs": written,
        "jax_version": jax.__version__,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog=f"python -m {PROG}", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("program", help="the original program (a JAXBench baseline.py)")
    parser.add_argument("directory", help="a `kbench export` directory")
    parser.add_argument("--out", help="where to write the outputs (default: the export directory)")
    parser.add_argument("--no-jit", action="store_true", help="run eagerly instead of under jax.jit")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON line")
    args = parser.parse_args(argv)
    try:
        report = run(args.program, args.directory, args.out, jit=not args.no_jit)
    except OriginalError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # the program's own failure (a shape error, ...): still one line
        message = str(e).splitlines()[0] if str(e) else ""
        print(f"{PROG}: error: {type(e).__name__}: {message}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report))
        return 0
    for c in report["changes"]:
        new, old = (v if isinstance(v, str) else repr(v) for v in (c["new"], c["old"]))
        new, old = (v if len(v) <= 60 else v[:56] + " ..." for v in (new, old))
        print(f"  set {c['where']} {c['name']} = {new} (was {old}, line {c['line']})")
    names = ", ".join(f"{o['name']}.npy ({o['dtype']})" for o in report["outputs"])
    print(f"{report['workload']} size={report['size']} seed={report['seed']}: ran "
          f"{os.path.basename(report['program'])} ({'jit' if report['jit'] else 'eager'}), "
          f"wrote {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
