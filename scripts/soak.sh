#!/usr/bin/env bash
# The soak: the bounded checks of the test command at full size. 10 000 model-checked actions
# over 100 sandboxes (one replica and two), 5 000 crash attempts, 5 000 hostile requests,
# 1 000 races; then
# the release server's fault test (PostgreSQL restarted under it) and the two-process test;
# then a 10-minute classroom (issue 29: 30 learners and hostile clients, CLASSROOM_SECONDS=600)
# against a release server of its own.
# MODEL_CHECK_SEED / FUZZ_SEED replay a run; the defaults are fixed seeds.
source "$(dirname "$0")/lib.sh"

CLASSROOM_DB="outbox_soak_classroom"
cleanup() {
  local status=$?
  stop_release_server
  if [ -n "${PG_SERVER_URL:-}" ]; then
    psql -w -q "$PG_SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS \"$CLASSROOM_DB\" WITH (FORCE)" \
      >/dev/null 2>&1 || true
  fi
  stop_private_postgres
  exit "$status"
}
trap cleanup EXIT

ensure_toolchain
ensure_postgres outbox_playground
log "soak: model check, crashes, hostile input"
DATABASE_URL="$PG_SERVER_URL/postgres" \
  MODEL_CHECK_ACTIONS="${MODEL_CHECK_ACTIONS:-10000}" \
  MODEL_CHECK_SANDBOXES="${MODEL_CHECK_SANDBOXES:-100}" \
  CRASH_ATTEMPTS="${CRASH_ATTEMPTS:-5000}" \
  FUZZ_ITERATIONS="${FUZZ_ITERATIONS:-5000}" \
  RACE_RUNS="${RACE_RUNS:-1000}" \
  cargo test --release --workspace --test model_check --test crash_is_real --test hostile_input \
    --test wrong_ways
log "building the release server for the fault and replica tests"
cargo leptos build --release
scripts/fault-restart.sh
scripts/replicas.sh

log "soak: a 10-minute classroom"
cargo build --release -p bench
psql -w -q "$PG_SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS \"$CLASSROOM_DB\" WITH (FORCE)"
PORT="$(free_port 3300)"
# One address claims a sandbox per learner here (the class comes from 127.0.0.1).
start_release_server "$PORT" "$PG_SERVER_URL/$CLASSROOM_DB" PLAYGROUND_NEW_SANDBOXES_BURST=1000
CLASSROOM_SERVER_PID="$SERVER_PID" CLASSROOM_SECONDS="${CLASSROOM_SECONDS:-600}" \
  scripts/classroom.sh "http://127.0.0.1:$PORT" "$PG_SERVER_URL/$CLASSROOM_DB" \
  "${CLASSROOM_LEARNERS:-30}" "${CLASSROOM_SECONDS:-600}"
stop_release_server
log "soak passed"
