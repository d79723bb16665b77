#!/usr/bin/env bash
# Runs every test, setting up whatever is missing first. In order: formatting, clippy (server
# and browser builds), hadolint, the Rust tests against a real PostgreSQL, the release site
# build (with its WASM size), then Playwright in Debian's Chromium against the running
# server (also launched from a real LTI 1.3 platform, end2end/lti-platform/), 10 000
# cookie-less page views, a short classroom (20 learners, 20 s), a check that the server never
# panicked meanwhile, and the fault and replica scripts. Stops everything it started, also on
# failure; exits non-zero on any failure.
source "$(dirname "$0")/lib.sh"

E2E_DB=""
SERVER_ERRORS=""
LTI_FILES=""
cleanup() {
  local status=$?
  stop_release_server
  stop_lti_platform
  [ -z "$SERVER_ERRORS" ] || rm -f "$SERVER_ERRORS"
  [ -z "$LTI_FILES" ] || rm -rf "$LTI_FILES"
  if [ -n "$E2E_DB" ]; then
    psql -w -q "$PG_SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS \"$E2E_DB\" WITH (FORCE)" \
      >/dev/null 2>&1 || true
  fi
  stop_private_postgres
  if [ "$status" -eq 0 ]; then log "all tests passed"; else log "FAILED (exit $status)"; fi
  exit "$status"
}
trap cleanup EXIT

# A one-off run gains nothing from incremental caches; they only cost disk and time.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

ensure_toolchain
ensure_chromium
ensure_hadolint
ensure_lti_platform

log "cargo fmt --check"
cargo fmt --all --check

log "clippy: server side (workspace, all targets)"
cargo clippy --workspace --all-targets -- -D warnings
log "clippy: browser side (wasm32, hydrate)"
cargo clippy -p app --lib --target wasm32-unknown-unknown --no-default-features \
  --features hydrate -- -D warnings

log "hadolint Dockerfile"
"$HADOLINT" Dockerfile

ensure_postgres outbox_playground
log "Rust tests against PostgreSQL"
# #[sqlx::test] creates a fresh database per test through the server's maintenance database.
DATABASE_URL="$PG_SERVER_URL/postgres" cargo test --workspace

log "building the release site"
cargo leptos build --release
scripts/wasm-size.sh
log "building the classroom load generator"
cargo build --release -p bench

# A fresh database for the browser tests, on the same server, dropped afterwards.
E2E_DB="outbox_e2e_$$"
PORT="$(free_port 3100)"
log "starting the server on 127.0.0.1:$PORT (database $E2E_DB)"
# A browser test clicks faster than a learner; a larger request budget keeps it from 429s.
# Every spec's fresh page is a newcomer from 127.0.0.1, so the suite claims more sandboxes
# from one address than a classroom would: a larger claim budget too.
# The embed tests play a course site at http://localhost:4321 that may frame the playground.
SERVER_ERRORS="$(mktemp)"
# The author's page is tested with a token made for this run.
AUTHOR_TOKEN="e2e-author-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
# The LTI tests launch the playground from a real LTI 1.3 platform (end2end/lti-platform/) on
# a port of its own, registered in the playground, which lets it frame the playground; the
# tool's key is made on the server's first start.
LTI_FILES="$(mktemp -d)"
start_lti_platform "$(free_port $((PORT + 1)))" "http://127.0.0.1:$PORT"
log "the LTI test platform answers on $LTI_PLATFORM_URL"
cat >"$LTI_FILES/registration.toml" <<EOF
[[registration]]
issuer = "$LTI_PLATFORM_URL"
client_id = "playground-e2e"
deployment_ids = ["1"]
auth_login_url = "$LTI_PLATFORM_URL/auth"
token_url = "$LTI_PLATFORM_URL/token"
jwks_url = "$LTI_PLATFORM_URL/jwks"
EOF
start_release_server "$PORT" "$PG_SERVER_URL/$E2E_DB" \
  PLAYGROUND_RATE_PER_SECOND=100 PLAYGROUND_RATE_BURST=300 \
  PLAYGROUND_NEW_SANDBOXES_BURST=1000 \
  PLAYGROUND_FRAME_ANCESTORS="http://localhost:4321 $LTI_PLATFORM_URL" \
  PLAYGROUND_LTI_CONFIG="$LTI_FILES/registration.toml" \
  PLAYGROUND_LTI_KEY="$LTI_FILES/tool-key.pem" \
  PLAYGROUND_AUTHOR_TOKEN="$AUTHOR_TOKEN"

log "Playwright in Chromium"
(cd end2end && BASE_URL="http://127.0.0.1:$PORT" DATABASE_URL="$PG_SERVER_URL/$E2E_DB" \
  AUTHOR_TOKEN="$AUTHOR_TOKEN" LTI_PLATFORM_URL="$LTI_PLATFORM_URL" npx playwright test)

log "10 000 page views without a cookie claim nothing"
scripts/page-views.sh "http://127.0.0.1:$PORT" "$PG_SERVER_URL/$E2E_DB"
log "a short classroom: 20 learners for 20 s, hostile clients, then everybody at once"
CLASSROOM_SERVER_PID="$SERVER_PID" \
  scripts/classroom.sh "http://127.0.0.1:$PORT" "$PG_SERVER_URL/$E2E_DB" 20 20
log "the server did not panic under the browser tests, the page views and the classroom"
assert_no_panics

log "fault: PostgreSQL restarted under the running server (private cluster)"
scripts/fault-restart.sh
log "two server processes on one database"
scripts/replicas.sh
