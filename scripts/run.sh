#!/usr/bin/env bash
# Runs the playground on http://127.0.0.1:3000 (release build), setting up whatever is
# missing first: Rust's wasm target, cargo-leptos, the wasm-bindgen CLI, npm packages
# (wasm-opt), and PostgreSQL (DATABASE_URL, else 127.0.0.1:5432, else a private cluster).
source "$(dirname "$0")/lib.sh"

ensure_toolchain
trap stop_private_postgres EXIT
ensure_postgres outbox_playground

export LEPTOS_SITE_ADDR="${LEPTOS_SITE_ADDR:-127.0.0.1:3000}"
log "building and serving on http://$LEPTOS_SITE_ADDR (Ctrl-C stops)"
cargo leptos serve --release
