# Multi-stage build of the outbox playground.
# The builder takes every tool from crates.io, npm and Debian (no downloads from GitHub):
# the same versions scripts/lib.sh installs locally.

FROM rust:1.95-slim-bookworm AS builder
# Debian's nodejs/npm only serve the npm package `binaryen` (wasm-opt for release builds).
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm pkg-config \
 && rm -rf /var/lib/apt/lists/*
RUN rustup target add wasm32-unknown-unknown \
 && cargo install cargo-leptos --version 0.3.10 --locked \
 && cargo install wasm-bindgen-cli --version 0.2.130
WORKDIR /src/end2end
COPY end2end/package.json end2end/package-lock.json ./
RUN PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
WORKDIR /src
COPY . .
ENV PATH=/src/end2end/node_modules/.bin:$PATH
RUN cargo leptos build --release

FROM debian:bookworm-slim AS runtime
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin playground
WORKDIR /app
COPY --from=builder /src/target/release/server /app/server
# The site files' content hashes; the server looks for this file beside its binary.
COPY --from=builder /src/target/release/hash.txt /app/hash.txt
COPY --from=builder /src/target/site /app/site
ENV LEPTOS_SITE_ROOT=/app/site \
    LEPTOS_SITE_PKG_DIR=pkg \
    LEPTOS_OUTPUT_NAME=outbox-playground \
    LEPTOS_SITE_ADDR=0.0.0.0:3000 \
    LEPTOS_ENV=PROD \
    LEPTOS_HASH_FILES=true \
    RUST_LOG=info
USER 10001
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["curl", "-fsS", "http://127.0.0.1:3000/healthz"]
CMD ["/app/server"]
