#!/usr/bin/env bash
# Fault: PostgreSQL goes away under a running server, with learners acting, and comes back. On a private cluster
# (so the machine's own PostgreSQL is never touched) with the release server built already:
# while PostgreSQL is down every action must answer 503 `unavailable` as JSON in the
# learner's language within one second and /healthz 503, and the server must stay up; once
# PostgreSQL is back the server must recover by itself and every action must match the model
# again.
source "$(dirname "$0")/lib.sh"

[ -x target/release/server ] || die "build the release server first (cargo leptos build --release)"
ensure_jq
WORK="$(mktemp -d)"
LOADERS=()
cleanup() {
  local status=$?
  touch "$WORK/stop"
  [ "${#LOADERS[@]}" -eq 0 ] || kill "${LOADERS[@]}" 2>/dev/null || true
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
# The learners under load act faster than the request budget allows; lift it.
RUST_LOG="${RUST_LOG:-off}" start_release_server "$PORT" "$PG_SERVER_URL/outbox_fault" \
  PLAYGROUND_WARM_SANDBOXES=0 PLAYGROUND_RATE_PER_SECOND=100000 PLAYGROUND_RATE_BURST=100000

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

# act ENDPOINT FORM [LANG]: POSTs as the learner; sets CODE, BODY and SECS (the answer's time).
act() {
  local referer="http://127.0.0.1:$PORT/?lang=${3:-ru}" out
  out="$(curl -s -o "$WORK/body" -w '%{http_code} %{time_total}' -c "$WORK/jar" -b "$WORK/jar" \
    -H 'Accept: application/json' -H "Referer: $referer" -X POST "$BASE/api/$1" --data "$2")"
  CODE="${out% *}"
  SECS="${out#* }"
  BODY="$(cat "$WORK/body")"
}

# Fails unless the last answer came within one second.
expect_prompt() {
  awk -v s="$SECS" 'BEGIN { exit !(s < 1.0) }' ||
    die "$1 while PostgreSQL is down took ${SECS}s; it must answer within 1 s"
}

expect_report() {
  act "$@"
  [ "$CODE" = 200 ] || die "$1 $2: expected 200, got $CODE: $BODY"
  grep -q '"matches_model":true' <<<"$BODY" || die "$1 $2: the report does not match the model: $BODY"
  check_tables_against_report "$WORK/body" "$PG_SERVER_URL/outbox_fault" "$1 $2"
}

expect_report reset ""
expect_report attempt "crash=none"

# Load: other learners keep acting all through the outage. Each loop writes the status of
# every answer; none may be a 5xx other than 503, and none may be left unanswered.
for n in 1 2 3 4; do
  (
    crashes=(none after_update after_insert commit_reply_lost after_commit)
    while [ ! -f "$WORK/stop" ]; do
      curl -s -m 30 -o /dev/null -w '%{http_code}\n' -c "$WORK/load$n" -b "$WORK/load$n" \
        -H 'Accept: application/json' -X POST "$BASE/api/attempt" \
        --data "crash=${crashes[$((RANDOM % 5))]}" >>"$WORK/codes$n" || echo "no answer" >>"$WORK/codes$n"
      curl -s -m 30 -o /dev/null -w '%{http_code}\n' -b "$WORK/load$n" -H 'Accept: application/json' \
        -X POST "$BASE/api/reset" >>"$WORK/codes$n" || echo "no answer" >>"$WORK/codes$n"
    done
  ) &
  LOADERS+=("$!")
done
# Let the load reach the server before PostgreSQL goes.
wait_for_lines() {
  local deadline=$((SECONDS + 30))
  while [ "$(cat "$WORK"/codes* 2>/dev/null | wc -l)" -lt "$1" ]; do
    [ "$SECONDS" -lt "$deadline" ] || die "the load did not get going"
    sleep 0.1
  done
}
wait_for_lines 20

log "stopping PostgreSQL under the running server (4 learners keep acting)"
as_pg "$PRIVATE_PG_BIN/pg_ctl" -D "$PRIVATE_PG_DIR/data" -m fast -w stop >/dev/null
wait_for_status "$BASE/healthz" 503 10
# Once the outage is known, every answer comes at once: no waiting out the pool's timeout.
for endpoint in attempt reset reopen reconcile snapshot current attempt reset; do
  # Only an attempt takes fields; the others refuse any (422 unknown_field).
  form=""
  [ "$endpoint" = attempt ] && form="crash=after_update"
  act "$endpoint" "$form"
  [ "$CODE" = 503 ] || die "$endpoint while PostgreSQL is down: expected 503, got $CODE: $BODY"
  expect_prompt "$endpoint"
  log "$endpoint while PostgreSQL is down: 503 in ${SECS}s"
  grep -q '"code":"unavailable"' <<<"$BODY" || die "$endpoint: no unavailable code: $BODY"
  grep -q 'недоступна' <<<"$BODY" || die "$endpoint: the message is not in Russian: $BODY"
done
act attempt "crash=none" en
grep -q 'The database is unavailable' <<<"$BODY" || die "no English message: $BODY"
expect_prompt "attempt (en)"
kill -0 "$SERVER_PID" || die "the server died with PostgreSQL"

# The learners under load must meet the outage too (their answers come at once now, so
# PostgreSQL stays down until they have).
deadline=$((SECONDS + 30))
until [ "$(cat "$WORK"/codes* | grep -c '^503$')" -ge 8 ]; do
  [ "$SECONDS" -lt "$deadline" ] || die "the load never met the outage"
  kill -0 "$SERVER_PID" 2>/dev/null || die "the server died with PostgreSQL"
  sleep 0.1
done
log "starting PostgreSQL again"
private_postgres_start
wait_for_status "$BASE/healthz" 200 30
expect_report reset ""
expect_report attempt "crash=after_update"
expect_report attempt "crash=commit_reply_lost&commit_fate=applied"
expect_report reconcile ""
expect_report reopen ""
expect_report attempt "crash=none"
touch "$WORK/stop"
wait "${LOADERS[@]}"
codes="$(cat "$WORK"/codes* | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
log "answers to the learners under load: $codes"
if cat "$WORK"/codes* | grep -qvE '^(200|503|429)$'; then
  die "an answer under load was neither 200, 503 nor 429: $codes"
fi
grep -q '^503$' "$WORK"/codes* || die "the load never met the outage: $codes"
log "the server recovered by itself; every action matches the model again"
