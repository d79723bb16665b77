#!/usr/bin/env bash
# Fault: PostgreSQL goes away under a running server and comes back. On a private cluster
# (so the machine's own PostgreSQL is never touched) with the release server built already:
# while PostgreSQL is down every action must answer 503 `unavailable` as JSON in the
# learner's language and /healthz 503, and the server must stay up; once PostgreSQL is back
# the server must recover by itself and every action must match the model again.
source "$(dirname "$0")/lib.sh"

[ -x target/release/server ] || die "build the release server first (cargo leptos build --release)"
WORK="$(mktemp -d)"
cleanup() {
  local status=$?
  stop_release_server
  stop_private_postgres
  rm -rf "$WORK"
  if [ "$status" -eq 0 ]; then log "fault test passed"; else log "fault test FAILED (exit $status)"; fi
  exit "$status"
}
trap cleanup EXIT

PRIVATE_PG_NAME=fault start_private_postgres
PORT="$(free_port 3300)"
BASE="http://127.0.0.1:$PORT"
log "starting the server on $BASE against the private PostgreSQL"
RUST_LOG="${RUST_LOG:-error}" start_release_server "$PORT" "$PG_SERVER_URL/outbox_fault" \
  PLAYGROUND_WARM_SANDBOXES=0

# Waits until `$1` answers HTTP status `$2`, for at most `$3` seconds.
wait_for_status() {
  local deadline=$((SECONDS + $3))
  while [ "$SECONDS" -lt "$deadline" ]; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" = "$2" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited"
    sleep 0.2
  done
  die "$1 did not answer $2 within $3 s"
}

# act ENDPOINT FORM [LANG]: POSTs as the learner; sets CODE and BODY.
act() {
  local referer="http://127.0.0.1:$PORT/?lang=${3:-ru}"
  CODE="$(curl -s -o "$WORK/body" -w '%{http_code}' -c "$WORK/jar" -b "$WORK/jar" \
    -H 'Accept: application/json' -H "Referer: $referer" -X POST "$BASE/api/$1" --data "$2")"
  BODY="$(cat "$WORK/body")"
}

expect_report() {
  act "$@"
  [ "$CODE" = 200 ] || die "$1 $2: expected 200, got $CODE: $BODY"
  grep -q '"matches_model":true' <<<"$BODY" || die "$1 $2: the report does not match the model: $BODY"
}

expect_report reset ""
expect_report attempt "crash=none"

log "stopping PostgreSQL under the running server"
as_pg "$PRIVATE_PG_BIN/pg_ctl" -D "$PRIVATE_PG_DIR/data" -m fast -w stop >/dev/null
wait_for_status "$BASE/healthz" 503 10
for endpoint in attempt reset reopen reconcile snapshot current; do
  act "$endpoint" "crash=after_update"
  [ "$CODE" = 503 ] || die "$endpoint while PostgreSQL is down: expected 503, got $CODE: $BODY"
  grep -q '"code":"unavailable"' <<<"$BODY" || die "$endpoint: no unavailable code: $BODY"
  grep -q 'недоступна' <<<"$BODY" || die "$endpoint: the message is not in Russian: $BODY"
done
act attempt "crash=none" en
grep -q 'The database is unavailable' <<<"$BODY" || die "no English message: $BODY"
kill -0 "$SERVER_PID" || die "the server died with PostgreSQL"

log "starting PostgreSQL again"
private_postgres_start
wait_for_status "$BASE/healthz" 200 30
expect_report reset ""
expect_report attempt "crash=after_update"
expect_report attempt "crash=commit_reply_lost&commit_fate=applied"
expect_report reconcile ""
expect_report reopen ""
expect_report attempt "crash=none"
log "the server recovered by itself; every action matches the model again"
