#!/usr/bin/env bash
# Two server processes on one database, as behind a load balancer: a learner's requests go to
# either, one after another and in parallel pairs, and every report must match the model and
# name the same sandbox; after each sequential action psql reads the sandbox's tables, which
# must hold what the report says. Needs the release server built (cargo leptos build --release).
source "$(dirname "$0")/lib.sh"

[ -x target/release/server ] || die "build the release server first (cargo leptos build --release)"
ensure_jq
WORK="$(mktemp -d)"
DB="outbox_replicas_$$"
PID_A=""
PID_B=""
cleanup() {
  local status=$?
  for pid in "$PID_A" "$PID_B"; do
    [ -n "$pid" ] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  done
  psql -w -q "$PG_SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" \
    >/dev/null 2>&1 || true
  stop_private_postgres
  rm -rf "$WORK"
  if [ "$status" -eq 0 ]; then log "replicas test passed"; else log "replicas test FAILED (exit $status)"; fi
  exit "$status"
}
trap cleanup EXIT

ensure_postgres "$DB"
# This test is about two processes taking turns, not about the request budget: a script sends
# one learner's actions far faster than a person, so the budget is raised out of the way.
BUDGET=(PLAYGROUND_RATE_PER_SECOND=10000 PLAYGROUND_RATE_BURST=10000)
PORT_A="$(free_port 3400)"
start_release_server "$PORT_A" "$PG_SERVER_URL/$DB" "${BUDGET[@]}"
PID_A="$SERVER_PID"
PORT_B="$(free_port $((PORT_A + 1)))"
start_release_server "$PORT_B" "$PG_SERVER_URL/$DB" "${BUDGET[@]}"
PID_B="$SERVER_PID"
SERVER_PID=""
log "two servers on one database: 127.0.0.1:$PORT_A and 127.0.0.1:$PORT_B"

# post PORT ENDPOINT FORM OUT: one request as the learner (cookie jar shared by both).
post() {
  curl -s -o "$4" -w '%{http_code}' -b "$WORK/jar" \
    -H 'Accept: application/json' -X POST "http://127.0.0.1:$1/api/$2" --data "$3"
}
sandbox_of() { grep -o '"sandbox":"sb_[a-z2-7]*"' "$1"; }
check() {
  local code="$1" body="$2" what="$3"
  [ "$code" = 200 ] || die "$what: expected 200, got $code: $(cat "$body")"
  grep -q '"matches_model":true' "$body" || die "$what: the report does not match the model: $(cat "$body")"
  [ "$(sandbox_of "$body")" = "$SANDBOX" ] || die "$what: another sandbox: $(cat "$body")"
}

code="$(curl -s -o "$WORK/first" -w '%{http_code}' -c "$WORK/jar" -H 'Accept: application/json' \
  -X POST "http://127.0.0.1:$PORT_A/api/reset")"
[ "$code" = 200 ] || die "first request: $code"
SANDBOX="$(sandbox_of "$WORK/first")"
[ -n "$SANDBOX" ] || die "no sandbox in $(cat "$WORK/first")"

forms=("crash=none" "crash=after_update" "crash=commit_reply_lost&commit_fate=applied" "crash=after_insert")
for round in $(seq 1 12); do
  form="${forms[$((round % ${#forms[@]}))]}"
  # One after another, alternating servers.
  port=$([ $((round % 2)) -eq 0 ] && echo "$PORT_A" || echo "$PORT_B")
  check "$(post "$port" attempt "$form" "$WORK/seq")" "$WORK/seq" "round $round: attempt $form on $port"
  check_tables_against_report "$WORK/seq" "$PG_SERVER_URL/$DB" "round $round: attempt $form on $port"
  # A pair at the same moment, one on each server: they must take turns.
  post "$PORT_A" attempt "$form" "$WORK/pa" >"$WORK/ca" &
  local_a=$!
  post "$PORT_B" reset "" "$WORK/pb" >"$WORK/cb" &
  wait "$local_a" "$!"
  check "$(cat "$WORK/ca")" "$WORK/pa" "round $round: parallel attempt on $PORT_A"
  check "$(cat "$WORK/cb")" "$WORK/pb" "round $round: parallel reset on $PORT_B"
done
log "both servers served one learner's sandbox; parallel actions took turns"
