#!/usr/bin/env bash
# A classroom against a running server (issue 29): LEARNERS learners (default 20) for
# SECONDS seconds (default 20) of the page's mix with hostile clients beside them, then
# everybody pressing the same button at once. Builds nothing: it runs the built
# target/release/bench (or $BENCH_BIN) with CLASSROOM_ASSERT=1, so it fails on any answer
# >= 500, a transaction left open, or an unhealthy server at the end.
#   scripts/classroom.sh URL DATABASE_URL [LEARNERS] [SECONDS]
# Optional: CLASSROOM_SERVER_PID (memory), CLASSROOM_THINK_MS, CLASSROOM_SEED (the learners'
# choices), CLASSROOM_OUT (append the report to this file).
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 URL DATABASE_URL [LEARNERS] [SECONDS]" >&2
  exit 2
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_BIN="${BENCH_BIN:-$ROOT/target/release/bench}"
[ -x "$BENCH_BIN" ] || { echo "error: $BENCH_BIN is not built (cargo build --release -p bench)" >&2; exit 1; }

CLASSROOM_URL="$1" CLASSROOM_DATABASE_URL="$2" \
  CLASSROOM_LEARNERS="${3:-20}" CLASSROOM_SECONDS="${4:-20}" CLASSROOM_ASSERT=1 \
  "$BENCH_BIN" classroom
