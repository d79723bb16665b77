import { expect, test } from "@playwright/test";
import { Client } from "pg";

// This file runs alone, after every other test (the "alone" project): it counts the sandboxes
// of the whole server, which tests running beside it would change.

async function claimedSandboxes(): Promise<number> {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const r = await client.query("SELECT count(*)::int AS n FROM lab.sandboxes WHERE token_hash IS NOT NULL");
    return r.rows[0].n;
  } finally {
    await client.end();
  }
}

test("10 000 page views without a cookie create no sandbox", async ({ playwright, baseURL }) => {
  // Ten thousand whole pages take a while on two cores; the assertion is about counts.
  test.setTimeout(240_000);
  // A fresh client per run: no cookie jar carries a sandbox from one request to the next.
  const api = await playwright.request.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
  const before = await claimedSandboxes();
  let next = 0;
  let setCookies = 0;
  const worker = async () => {
    while (next < 10_000) {
      next++;
      const res = await api.get(next % 2 ? "/?lang=ru" : "/?lang=en", { maxRedirects: 0 });
      expect(res.status()).toBe(200);
      if ((res.headersArray() ?? []).some((h) => h.name.toLowerCase() === "set-cookie" && /sandbox=/.test(h.value))) {
        setCookies++;
      }
      await res.dispose();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  await api.dispose();
  expect(setCookies).toBe(0);
  expect(await claimedSandboxes()).toBe(before);
});

