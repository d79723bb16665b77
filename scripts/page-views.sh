#!/usr/bin/env bash
# Looking costs nothing: 10 000 page views without a cookie (16 at a time, as crawlers, link
# previews and uptime probes come) must all answer 200, set no sandbox cookie and claim no
# sandbox. Runs against a running server. Usage: page-views.sh BASE_URL DATABASE_URL
# (PAGE_VIEWS changes the count). Run it while nothing else acts on that server: it counts
# the sandboxes of the whole database.
source "$(dirname "$0")/lib.sh"

BASE="$1"
DB_URL="$2"
VIEWS="${PAGE_VIEWS:-10000}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

claimed() {
  psql -w -Atq "$DB_URL" -c "SELECT count(*) FROM lab.sandboxes WHERE token_hash IS NOT NULL"
}

# view FIRST: every 16th view from FIRST on; writes each answer's headers and status.
view() {
  local n lang
  for n in $(seq "$1" 16 "$VIEWS"); do
    lang=$([ $((n % 2)) -eq 0 ] && echo ru || echo en)
    curl -s -m 30 -o /dev/null -D - -w 'status %{http_code}\n' "$BASE/?lang=$lang" ||
      echo "status none"
  done >"$WORK/views$1"
}

before="$(claimed)"
start=$SECONDS
for worker in $(seq 1 16); do view "$worker" & done
wait
ok="$(cat "$WORK"/views* | grep -c '^status 200$' || true)"
cookies="$(cat "$WORK"/views* | grep -ci '^set-cookie:.*sandbox=' || true)"
after="$(claimed)"
log "$VIEWS cookie-less page views in $((SECONDS - start)) s: $ok answered 200, $cookies sandbox cookies set, sandboxes $before -> $after"
[ "$ok" -eq "$VIEWS" ] || die "only $ok of $VIEWS page views answered 200"
[ "$cookies" -eq 0 ] || die "page views set $cookies sandbox cookies"
[ "$after" -eq "$before" ] || die "page views claimed $((after - before)) sandboxes"
