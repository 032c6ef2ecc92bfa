#!/usr/bin/env bash
# Compiles kbench for CPUs this machine may not be: the translation units of a build (from its
# compile_commands.json), and the candidate compile command (from `kbench scaffold`) on the
# candidates in tests/candidates/, examples/ and experts/, with -march=native replaced by each
# MARCH. Nothing is linked or run, so any x86-64 machine can check that the build and the candidate
# command work on, say, a Sapphire Rapids Xeon or an AVX2-only Zen 3.
#
# What gets compiled: an always_inline intrinsic used outside its target fails only at code
# generation, so every candidate, and every translation unit whose own code or project headers
# touch the ISA (intrinsics, Highway, oneDNN, target attributes, ISA macros), is compiled to an
# object file in a temporary directory, at -O1 (-O LEVEL to change), which generates code as -O3
# does in less time. Any other translation unit is preprocessed for -march=native and each MARCH;
# where the texts are identical its compile cannot differ from the one that built here, otherwise
# (a header that branches on ISA macros, or an #error like Highway's) it is compiled too. -a
# compiles every translation unit. Two CPUs take about a minute on 2 idle cores.
#
#   scripts/check-march.sh [-B BUILD_DIR] [-j JOBS] [-O LEVEL] [-a] MARCH...
#   scripts/check-march.sh -B build x86-64-v3 sapphirerapids
set -euo pipefail

usage() {
  echo "usage: $0 [-B BUILD_DIR (default build)] [-j JOBS (default nproc)] [-O LEVEL (default 1)]" \
    "[-a (compile every translation unit)] MARCH..." >&2
  exit 2
}

repo="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="$repo/build"
jobs="$(nproc)"
opt=1
all=0
while getopts "B:j:O:ah" flag; do
  case "$flag" in
    B) build_dir="$(cd "$OPTARG" && pwd)" ;;
    j) jobs="$OPTARG" ;;
    O) opt="$OPTARG" ;;
    a) all=1 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
(($# > 0)) || usage
marches=("$@")

db="$build_dir/compile_commands.json"
kbench="$build_dir/src/kbench"
[[ -f $db ]] || { echo "check-march: no $db (configure with CMake first)" >&2; exit 1; }
[[ -x $kbench ]] || { echo "check-march: no $kbench (build first)" >&2; exit 1; }

# The exact candidate command, as `kbench scaffold` prints it for candidates to copy.
candidate_line="$("$kbench" scaffold 12p_RMSNorm | sed -n 's|^// Built by kbench as: ||p')"
[[ -n $candidate_line ]] || {
  echo "check-march: \`kbench scaffold\` printed no '// Built by kbench as:' line" >&2
  exit 1
}
candidates=("$repo"/tests/candidates/*.cpp "$repo"/examples/*.cpp "$repo"/experts/*.cpp)

# A -march value the compiler does not know would fail every job below with the same message.
read -r candidate_cxx _ <<<"$candidate_line"
for march in "${marches[@]}"; do
  if ! "$candidate_cxx" -march="$march" -x c++ -E -o /dev/null /dev/null 2>/dev/null; then
    echo "check-march: $candidate_cxx does not accept -march=$march" >&2
    exit 2
  fi
done

work="$(mktemp -d /tmp/kbench-check-march.XXXXXX)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS

# The plan: preprocesses what needs it ($jobs at a time), prints one compile job per line,
# "<label>\t<shell command>", the command a quoted `cd DIR && compiler ...`; a summary to stderr.
python3 - "$db" "$work" "$opt" "$all" "$jobs" "$candidate_line" "${#marches[@]}" "${marches[@]}" \
  "${candidates[@]}" >"$work/jobs" <<'PY'
import concurrent.futures, hashlib, json, os, re, shlex, subprocess, sys

db, work, opt, all_tus, parallel, candidate_line, n = sys.argv[1:8]
marches = sys.argv[8:8 + int(n)]
candidates = sys.argv[8 + int(n):]
DROP_WITH_ARG = {"-o", "-MF", "-MT", "-MQ"}
# What makes a file's compile depend on -march: ISA headers and libraries, intrinsics and their
# types, target attributes and pragmas, the compiler's ISA macros.
ISA = re.compile(r'#\s*include\s*[<"](hwy/|oneapi/dnnl|dnnl|\w*intrin\.h)'
                 r'|__attribute__\s*\(\(\s*target|#\s*pragma\s+GCC\s+target'
                 r'|\b__(AVX|SSE|FMA|F16C|AMX|BMI|AES|PCLMUL)\w*__'
                 r'|\b_mm\d*_|\b__m(128|256|512)|\b_tile_|__builtin_ia32|__builtin_cpu_supports')
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def touches_isa(path, include_dirs, seen):
    """Whether `path` or a project header it includes (transitively) matches ISA."""
    if path in seen:
        return False
    seen.add(path)
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return False
    if ISA.search(text):
        return True
    for name in INCLUDE.findall(text):
        for d in [os.path.dirname(path)] + include_dirs:
            header = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(header):
                if touches_isa(header, include_dirs, seen):
                    return True
                break
    return False


def retarget(args, march):
    """The same compile for `march`: -march replaced (or added), optimization at -O<opt>."""
    out, skip, has_march = [], False, False
    for a in args:
        if skip:
            skip = False
        elif a in DROP_WITH_ARG:
            skip = True
        elif a in ("-MD", "-MMD", "-c"):
            pass
        elif a.startswith("-march="):
            out.append("-march=" + march)
            has_march = True
        elif a.startswith("-O"):
            out.append("-O" + opt)
        else:
            out.append(a)
    if not has_march:
        out.append("-march=" + march)
    return out


def preprocessed_digest(directory, args, source, march):
    """SHA-256 of the preprocessed text for `march`, or None when preprocessing fails."""
    r = subprocess.run(retarget(args, march) + ["-E", "-o", "-", source], cwd=directory,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return hashlib.sha256(r.stdout).hexdigest() if r.returncode == 0 else None


entries = []
for entry in json.load(open(db)):
    args = entry.get("arguments") or shlex.split(entry["command"])
    source = entry["file"]
    args = [a for a in args if a != source]
    include_dirs = [os.path.join(entry["directory"], a[2:]) for a in args
                    if a.startswith("-I") and len(a) > 2]
    entries.append((entry["directory"], args, source, include_dirs))

compile_reason = {}  # source -> why it is compiled
pool = concurrent.futures.ThreadPoolExecutor(max_workers=int(parallel))
digests = {}
for directory, args, source, include_dirs in entries:
    if all_tus == "1":
        compile_reason[source] = "-a"
    elif touches_isa(source, include_dirs, set()):
        compile_reason[source] = "touches the ISA"
    else:
        for march in ["native"] + marches:
            digests[source, march] = pool.submit(preprocessed_digest, directory, args, source,
                                                 march)
for directory, args, source, include_dirs in entries:
    if source in compile_reason:
        continue
    native = digests[source, "native"].result()
    if native is None or any(digests[source, m].result() != native for m in marches):
        compile_reason[source] = "preprocesses differently from -march=native"
pool.shutdown()

jobs = []
for directory, args, source, include_dirs in entries:
    if source not in compile_reason:
        continue
    for march in marches:
        cmd = retarget(args, march) + ["-c", "-o", f"{work}/{len(jobs)}.o", source]
        jobs.append((f"-march={march} {source} ({compile_reason[source]})", directory, cmd))

# The candidate line ends "-o candidate.so candidate.cpp <libraries>"; a compile-only run keeps the
# compiler and flags, drops the link-only parts.
cand = [a for a in shlex.split(candidate_line)
        if a not in ("-shared", "candidate.cpp") and not a.startswith(("-l", "-Wl,"))]
for path in candidates:
    for march in marches:
        cmd = retarget(cand, march) + ["-c", "-o", f"{work}/{len(jobs)}.o", path]
        jobs.append((f"-march={march} candidate {path}", work, cmd))

for label, directory, cmd in jobs:
    print(f"{label}\tcd {shlex.quote(directory)} && {shlex.join(cmd)}")
same = len(entries) - len(compile_reason)
print(f"check-march: -march={' '.join(marches)}: {len(compile_reason)} of {len(entries)} "
      f"translation units and {len(candidates)} candidates compiled at -O{opt} ({len(jobs)} "
      f"compiles); {same} preprocess as for -march=native and touch no ISA", file=sys.stderr)
PY

# Runs one job; on failure leaves its label, command and compiler output in a .fail file.
run_job() {
  local label="${1%%$'\t'*}" cmd="${1#*$'\t'}" log
  log="$(mktemp "$CHECK_MARCH_WORK/job.XXXXXX")"
  if ! (eval "$cmd") >"$log" 2>&1; then
    { printf 'FAILED: %s\n  %s\n' "$label" "$cmd"; cat "$log"; } >"$log.fail"
  fi
  rm -f "$log"
}
export -f run_job
export CHECK_MARCH_WORK="$work"

# shellcheck disable=SC2016  # $1 is for the inner bash
xargs -d '\n' -n1 -P"$jobs" bash -c 'run_job "$1"' _ <"$work/jobs" || true
shopt -s nullglob
failures=("$work"/*.fail)
for f in "${failures[@]}"; do cat "$f"; echo; done
echo "check-march: ${#failures[@]} of $(wc -l <"$work/jobs") compiles failed;" \
  "$((SECONDS - start)) s in all"
((${#failures[@]} == 0))
