#!/usr/bin/env bash
# Installs the Debian packages kbench builds and runs with, skipping the package index update when
# everything is already present (so a prepared machine needs no network).
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libcurl4-openssl-dev # the agents' LLM providers (HTTP(S))
  chromium             # headless: the test that renders the agent report's HTML page
  libopenblas-dev      # sgemm for baselines; also linked by candidates
  libdnnl-dev          # oneDNN: bf16/f32 matmul with fused post-ops for baselines; linked by candidates
  # dnnl-config.cmake fails without OpenCL, which Debian makes only a Recommends; installed rather than
  # finding oneDNN by hand, which would drift from the packager's version and interface targets.
  ocl-icd-opencl-dev
  libhwy-dev           # Highway: vectorized exp in baselines
  libsqlite3-dev       # results store
  libssl-dev           # SHA-256 for the compile cache
  libseccomp-dev       # the candidate worker's syscall filter
  nlohmann-json3-dev   # JSON output and records
  libcli11-dev         # command line
  libgtest-dev libgmock-dev  # tests
  libbenchmark-dev     # bench/: micro-benchmarks of GEMM paths and input generation
  libjemalloc2         # the XLA:CPU peer's allocator (scripts/xla-peer.sh), as a framework would cache
  python3-numpy        # the interop test's NumPy kernel (tests/interop_test.cc; skipped without it)
  python3-venv         # the venvs of scripts/xla-peer.sh and scripts/local-llm.sh (pip comes with it)
  ca-certificates      # HTTPS: the agents' providers (libcurl) and pip; only a Recommends of libcurl4
  curl                 # scripts/local-llm.sh start waits for the server with it
  clang libclang-rt-dev libomp-dev  # libFuzzer targets of the parsers (tests/fuzz/, docs/fuzzing.md)
  llvm-19              # llvm-mca-19: `kbench analyze` (LLVM 19's models of AVX512-BF16 and recent cores)
  slurm-wlm munge      # the one-node cluster of the sweep test (tests/slurm/); `kbench sweep --executor slurm`
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "kbench: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# oneMKL, from PyPI into .venv-mkl/ (Debian 12 does not carry it): the baselines' MKL GEMM paths.
"$(dirname "$0")/install-mkl.sh"
