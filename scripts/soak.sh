#!/usr/bin/env bash
# The soak: the bounded checks of the test command at full size. 10 000 model-checked actions
# over 100 sandboxes (one replica and two), 5 000 crash attempts, 5 000 hostile requests,
# 1 000 races; then
# the release server's fault test (PostgreSQL restarted under it) and the two-process test.
# MODEL_CHECK_SEED / FUZZ_SEED replay a run; the defaults are fixed seeds.
source "$(dirname "$0")/lib.sh"
trap 'stop_private_postgres' EXIT

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
log "soak passed"
