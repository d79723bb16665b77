#!/usr/bin/env bash
# Prints the release WASM's size raw, gzip -9 and brotli (q11); fails above the gzip budget.
set -euo pipefail
cd "$(dirname "$0")/.."
# The name carries a content hash (hash-files): take the newest build.
WASM="${1:-$(ls -t target/site/pkg/outbox-playground*.wasm 2>/dev/null | head -n 1)}"
# The budget is issue 11's: 150 KB gzip. Only the controls (with the timeline strip) are an
# island, so the WASM holds them and the framework's hydration runtime: about 130 KB (98 KB
# before the strip). With the whole page hydrated it was 451 KB (every view plus the report's
# JSON decoders).
BUDGET_GZIP_KB="${WASM_BUDGET_GZIP_KB:-150}"
[ -n "$WASM" ] && [ -f "$WASM" ] || { echo "no WASM in target/site/pkg: build the release site first" >&2; exit 1; }
# Node's zlib has both codecs; no extra tool needed.
node - "$WASM" "$BUDGET_GZIP_KB" <<'JS'
const zlib = require("zlib");
const fs = require("fs");
const [file, budgetKb] = process.argv.slice(2);
const raw = fs.readFileSync(file);
const gz = zlib.gzipSync(raw, { level: 9 }).length;
const br = zlib.brotliCompressSync(raw, {
  params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 },
}).length;
const kb = (n) => (n / 1024).toFixed(1) + " KB";
console.log(`WASM size: raw ${kb(raw.length)}, gzip -9 ${kb(gz)}, brotli ${kb(br)} (budget ${budgetKb} KB gzip)`);
if (gz > Number(budgetKb) * 1024) {
  console.error("the WASM is over its gzip budget");
  process.exit(1);
}
JS
