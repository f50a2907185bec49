#!/usr/bin/env bash
# Developer entry points, the same on a workstation and in CI (README.md, .ci/run). Usage:
#   bash scripts/dev.sh demo [ARGS]    install deps, build the CLI, run the built-in demo (`ldmsim run ARGS`)
#   bash scripts/dev.sh test           install deps, format check, build everything, ctest, installed-package test
#                                      (C++ consumers, and `import ldmsim` from the install prefix)
#   bash scripts/dev.sh format-check   clang-format --dry-run --Werror over every project source
#   bash scripts/dev.sh format         clang-format -i over every project source
# LDMSIM_JOBS (default 2) sets the build parallelism.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

JOBS="${LDMSIM_JOBS:-2}"

log() { printf '\n== dev.sh: %s\n' "$*"; }

install_deps() { bash scripts/install-deps.sh "$@"; }

configure() {
  log "configure (CMake preset 'default': build/, RelWithDebInfo, Ninja, ccache, -Werror)"
  cmake --preset default
}

# Every C and C++ source of the project, NUL-separated (build directories and .git excluded).
project_sources() {
  local files
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.c' '*.h')
  else
    files=$(find . \( -path './build*' -o -path './.git' \) -prune -o -type f \
      \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||')
  fi
  while IFS= read -r file; do
    [[ -n "$file" && -f "$file" ]] && printf '%s\0' "$file"
  done <<<"$files"
}

format_check() {
  log "format check (clang-format --dry-run --Werror, .clang-format)"
  if ! project_sources | xargs -0 -r clang-format --dry-run --Werror; then
    echo "dev.sh: some files are not clang-formatted; run: bash scripts/dev.sh format" >&2
    return 1
  fi
  echo "format check: ok"
}

format() { project_sources | xargs -0 -r clang-format -i; }

# Installs the built tree to a temporary prefix and builds and runs tests/consumer against it, the way a user
# of find_package(ldmsim) would.
consumer_test() {
  log "installed-package test (cmake --install + tests/consumer with find_package(ldmsim))"
  local prefix
  prefix=$(mktemp -d "${TMPDIR:-/tmp}/ldmsim-install.XXXXXX")
  trap 'rm -rf "'"$prefix"'"' EXIT
  cmake --install build --prefix "$prefix" >/dev/null
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S tests/consumer -B "$prefix/consumer-build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" >/dev/null
  cmake --build "$prefix/consumer-build"
  ctest --test-dir "$prefix/consumer-build" --output-on-failure
  # An athread program's own C-only project (LANGUAGES C), as its authors would write it.
  if command -v ccache >/dev/null 2>&1; then launcher+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
  cmake -S tests/consumer_athread -B "$prefix/athread-build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" >/dev/null
  cmake --build "$prefix/athread-build"
  ctest --test-dir "$prefix/athread-build" --output-on-failure
  # The Python module from the install prefix, away from the source and build trees.
  (cd "$prefix" && PYTHONPATH="$prefix/lib/python3/dist-packages" /usr/bin/python3 -c \
    'import ldmsim, sys; assert ldmsim.__file__.startswith(sys.argv[1]), ldmsim.__file__; print("import ldmsim:", ldmsim.__file__, sorted(ldmsim.arch_presets()))' "$prefix")
}

cmd_demo() {
  install_deps
  configure
  log "build the ldmsim CLI (-j$JOBS)"
  cmake --build --preset default -j "$JOBS" --target ldmsim_cli
  log "run the built-in demo: ./build/tools/ldmsim run $*"
  ./build/tools/ldmsim run "$@"
}

cmd_test() {
  install_deps --test
  format_check
  configure
  log "build everything (-j$JOBS)"
  cmake --build --preset default -j "$JOBS"
  log "ctest"
  ctest --preset default --timeout 300
  consumer_test
  log "all tests passed"
}

usage() {
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

case "${1:-}" in
  demo) shift; cmd_demo "$@" ;;
  test) cmd_test ;;
  format-check) format_check ;;
  format) format ;;
  *) usage ;;
esac
