#!/usr/bin/env bash
# Installs Intel oneMKL from PyPI into a project-local venv (.venv-mkl/: lib/libmkl_rt.so.*, include/),
# which CMake finds at configure time and kbench loads at run time for its MKL GEMM paths
# (docs/baselines.md). Debian 12's enabled sources do not carry MKL. Nothing happens when the venv
# already holds the pinned version, so a prepared machine needs no network.
#
# Environment: KBENCH_MKL_VENV (default <repo>/.venv-mkl), KBENCH_MKL_VERSION (default the pin below),
# PYTHON (interpreter that creates the venv, default python3), KBENCH_NO_MKL=1 (skip: kbench then builds
# and runs without the MKL paths and says so).
# Exit status 0 when MKL is in place (or skipped); 1 with one line `install-mkl: error: ...` otherwise.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${KBENCH_MKL_VENV:-$root/.venv-mkl}"
# Pinned: the GEMM paths' measured rates and the candidates' link line are stated for one release.
version="${KBENCH_MKL_VERSION:-2026.2.1}"

die() {
  echo "install-mkl: error: $*" >&2
  exit 1
}

if [[ "${KBENCH_NO_MKL:-0}" == 1 ]]; then
  echo "install-mkl: skipped (KBENCH_NO_MKL=1); kbench builds without its MKL paths" >&2
  exit 0
fi
marker="$venv/kbench-mkl-version"
if [[ -f "$marker" && "$(cat "$marker")" == "$version" ]] && compgen -G "$venv/lib/libmkl_rt.so.*" >/dev/null; then
  exit 0
fi

mkdir -p "$venv" || die "cannot create $venv"
log="$venv/install.log"
echo "kbench: installing oneMKL $version from PyPI into $venv (log: $log)" >&2
start=$SECONDS
"${PYTHON:-python3}" -m venv "$venv" >"$log" 2>&1 ||
  die "cannot create a venv with ${PYTHON:-python3} -m venv (Debian: apt-get install python3-venv); see $log"
# --no-deps: kbench drives MKL through its GNU OpenMP layer on the process's own libgomp, so the
# intel-openmp and tbb wheels (another OpenMP runtime, and TBB) stay out.
"$venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps \
  "mkl==$version" "mkl-include==$version" >>"$log" 2>&1 ||
  die "pip install mkl==$version failed (no PyPI access?; KBENCH_NO_MKL=1 builds without MKL); see $log"
compgen -G "$venv/lib/libmkl_rt.so.*" >/dev/null || die "the mkl wheel left no lib/libmkl_rt.so.* in $venv; see $log"
[[ -f "$venv/include/mkl_cblas.h" ]] || die "the mkl-include wheel left no include/mkl_cblas.h in $venv; see $log"
echo "$version" >"$marker"
echo "kbench: oneMKL $version installed in $((SECONDS - start)) s, $(du -sh "$venv" | cut -f1) on disk" >&2
