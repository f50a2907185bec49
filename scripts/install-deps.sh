#!/usr/bin/env bash
# Installs the Debian 12 packages ldmsim needs to build and format, and only those that are missing (nothing
# is touched when all are present); `--test` adds what only the test suite needs. Non-interactive; needs root
# (or sudo) only when installing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache
  libboost-fiber-dev libboost-context-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev libzstd-dev zlib1g-dev
  catch2 libbenchmark-dev
  libopenblas-serial-dev pkg-config
  libonnx-dev libprotobuf-dev
  clang-format python3
  pybind11-dev python3-dev python3-numpy
  libopenmpi-dev openmpi-bin
  libdw-dev
)
# libopenblas-serial-dev: bench/conv_bench.cpp's native reference (fp32 im2col + sgemm, single-threaded).
# libonnx-dev, libprotobuf-dev: the ONNX front end parses models with ONNX's own protobuf classes.
# libdw-dev: athread checking reports name the slave code's source file and line (elfutils' libdw reads the
# program's DWARF); an athread program built against the installed package links it too.
# pybind11-dev, python3-dev, python3-numpy: the `ldmsim` Python module (python/, built by default; numpy at run time).
# libopenmpi-dev, openmpi-bin: MPI + athread programs (athread/mpi/, ldmsim_add_athread_program(... MPI)): the
# interposition library is built and installed only when MPI is found, and a program built against the installed
# package links Open MPI and runs under its mpirun, so they belong to the main list, not only to --test.
# Only the test suite needs these: python3-onnx builds the ONNX test models, zstandard runs the Python trace reader of
# docs/trace-format.md, chromium renders the HTML report, pytest runs tests/python, whose docs/python.md example
# uses pandas and matplotlib; protoc decodes the Perfetto export against the repository's proto subset.
if [[ "${1:-}" == "--test" ]]; then
  PACKAGES+=(python3-zstandard chromium python3-onnx python3-pytest python3-pandas python3-matplotlib
             protobuf-compiler)
fi

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed$'; then
    missing+=("$package")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-deps: run as root (or install sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
}
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
