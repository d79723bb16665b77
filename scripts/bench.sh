#!/usr/bin/env bash
# The benchmark: builds the release server and site, starts the server on its own database,
# runs the lesson's transaction with pgbench and the playground over HTTP at 1, 8 and 32
# clients, and prints the table, also written to BENCHMARKS.md. Then a classroom (issue 29)
# at 30 and at 100 learners, each on a fresh server, appended to BENCHMARKS.md as
# "## Classroom". Settings (environment): BENCH_SECONDS per step (10), BENCH_CLIENTS
# (1,8,32), BENCH_IDLE_SANDBOXES (10000), CLASSROOM_SECONDS per classroom phase 1 (60).
source "$(dirname "$0")/lib.sh"

BENCH_DB="outbox_bench_app"
CLASSROOM_DB="outbox_bench_classroom"
cleanup() {
  local status=$?
  stop_release_server
  if [ -n "${PG_SERVER_URL:-}" ]; then
    for db in "$BENCH_DB" "$CLASSROOM_DB"; do
      psql -w -q "$PG_SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" \
        >/dev/null 2>&1 || true
    done
  fi
  stop_private_postgres
  exit "$status"
}
trap cleanup EXIT

ensure_toolchain
ensure_valgrind
ensure_postgres outbox_playground
psql -w -q "$PG_SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS \"$BENCH_DB\" WITH (FORCE)"

log "building the release site, the server and the benchmark"
cargo leptos build --release
cargo build --release -p bench
WASM_LINE="$(scripts/wasm-size.sh 2>&1 | head -n1 || true)"

PORT="$(free_port 3200)"
log "starting the server on 127.0.0.1:$PORT (database $BENCH_DB)"
# The warm pool is sized for a class arriving at once. The per-sandbox request budget is
# lifted: it exists to stop scripts, and here a script is the point.
start_release_server "$PORT" "$PG_SERVER_URL/$BENCH_DB" PLAYGROUND_WARM_SANDBOXES=40 \
  PLAYGROUND_RATE_PER_SECOND=1000000 PLAYGROUND_RATE_BURST=1000000

CONTEXT="Run on $(date -u '+%Y-%m-%d %H:%M UTC') at commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown).

- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/Mem:/ {print $2}') GiB RAM
- PostgreSQL: $(psql -w -Atq "$PG_SERVER_URL/postgres" -c 'SHOW server_version')
- pgbench: $("$(pg_bin_dir)/pgbench" --version)
- $(rustc --version); server built with the release profile; load from \`bench\` (hyper client)
- the server runs with its defaults except a warm pool of 40 and no per-sandbox request budget
- command: \`./scripts/bench.sh\` (BENCH_SECONDS=${BENCH_SECONDS:-10}, BENCH_CLIENTS=${BENCH_CLIENTS:-1,8,32}, BENCH_IDLE_SANDBOXES=${BENCH_IDLE_SANDBOXES:-10000})"

log "benchmarking"
BENCH_URL="http://127.0.0.1:$PORT" BENCH_SERVER_PID="$SERVER_PID" \
  BENCH_PG_SERVER_URL="$PG_SERVER_URL" BENCH_APP_DATABASE_URL="$PG_SERVER_URL/$BENCH_DB" \
  BENCH_PGBENCH="$(pg_bin_dir)/pgbench" BENCH_CONTEXT="$CONTEXT" BENCH_WASM="$WASM_LINE" \
  BENCH_OUT="${BENCH_OUT:-BENCHMARKS.md}" target/release/bench

# The classroom: the server with its defaults, except that one address may claim a sandbox for
# every learner (here the whole class and its hostile clients come from 127.0.0.1). A fresh
# server and database for each size, so its peak memory is that class's own.
BENCH_OUT="${BENCH_OUT:-BENCHMARKS.md}"
printf '\n## Classroom\n\n%s\n\n' "Issue 29: a class uses one server at the same moment. \
\`bench classroom\` (scripts/classroom.sh runs the same binary) at 30 and 100 learners, on a \
fresh release server each (defaults, except PLAYGROUND_NEW_SANDBOXES_BURST=1000). All learners \
come from 127.0.0.1, one address, so at 100 the per-address caps (64 stepper sockets, 32 held \
runs) refuse the rest of a class stepping together, as they are meant to." >>"$BENCH_OUT"
for learners in 30 100; do
  stop_release_server
  psql -w -q "$PG_SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS \"$CLASSROOM_DB\" WITH (FORCE)"
  PORT="$(free_port 3200)"
  log "classroom: $learners learners (server on 127.0.0.1:$PORT, database $CLASSROOM_DB)"
  start_release_server "$PORT" "$PG_SERVER_URL/$CLASSROOM_DB" PLAYGROUND_NEW_SANDBOXES_BURST=1000
  # No CLASSROOM_ASSERT: the benchmark records what happened, missed targets included.
  CLASSROOM_URL="http://127.0.0.1:$PORT" CLASSROOM_DATABASE_URL="$PG_SERVER_URL/$CLASSROOM_DB" \
    CLASSROOM_SERVER_PID="$SERVER_PID" CLASSROOM_LEARNERS="$learners" \
    CLASSROOM_SECONDS="${CLASSROOM_SECONDS:-60}" CLASSROOM_OUT="$BENCH_OUT" \
    target/release/bench classroom
done
