#!/usr/bin/env bash
# Runs the Spin twin (spin/fuse.pml) beside `wbspec check` on every
# catalogue check the twin models, or on the checks named, and prints
# both unique-state counts, both states/s (medians, runs interleaved) and
# their ratio. Exit 1 if any count or verdict differs.
#   spin/compare.sh                      all twinnable checks, 3 runs each
#   spin/compare.sh -r 5 t-trunc-drop-2p five runs of one check
#   spin/compare.sh --catalogue DIR ...  checks of another catalogue
# Needs spin (Debian package `spin`) and gcc. docs/performance.md has the
# numbers and the encoding ("Spin twin").
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        -r) args+=(--repeat "$2"); shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
command -v spin >/dev/null || { echo "compare.sh: spin is not installed (apt-get install spin)" >&2; exit 2; }
cargo build --release --quiet --bin wbspec --bin spin-twin
echo "machine: $(nproc) CPUs, $(uname -r); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(spin -V)"
exec ./target/release/spin-twin compare "${args[@]}"
