import { expect, test } from "@playwright/test";
import { openHydrated, ticketStatus } from "./helpers";

test("the server's HTML already shows ticket-42 open, in Russian", async ({ request }) => {
  const html = await (await request.get("/")).text();
  expect(html).toContain('<html lang="ru"');
  expect(html).toContain("ticket-42");
  expect(html).toMatch(/data-col="status"[^>]*>open</);
});

test("the page hydrates and its controls react only then", async ({ page }) => {
  await openHydrated(page);
  await expect(ticketStatus(page)).toHaveText("open");
  // The fate of a lost COMMIT only matters for that crash point; once the WebAssembly runs,
  // the fate fieldset follows the chosen crash point (a disabled fieldset disables its inputs).
  const fate = page.locator('fieldset.fate input[value="applied"]');
  await expect(fate).toBeDisabled();
  await page.locator('input[name="crash"][value="commit_reply_lost"]').check();
  await expect(fate).toBeEnabled();
  await page.locator('input[name="crash"][value="after_update"]').check();
  await expect(fate).toBeDisabled();
});

test("without JavaScript every field is enabled", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.locator('fieldset.fate input[value="applied"]')).toBeEnabled();
  await context.close();
});

test("the language switches between Russian and English and is remembered", async ({ page }) => {
  await openHydrated(page);
  await expect(page.locator("h1")).toHaveText("Статус и outbox в одной транзакции");
  await page.getByRole("link", { name: "English" }).click();
  await expect(page.locator("h1")).toHaveText("Status and outbox in one transaction");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await expect(page).toHaveURL(/lang=en/);

  // The choice sticks without the query parameter.
  await openHydrated(page, "/");
  await expect(page.locator("h1")).toHaveText("Status and outbox in one transaction");

  await page.getByRole("link", { name: "Русский" }).click();
  await expect(page.locator("h1")).toHaveText("Статус и outbox в одной транзакции");
  await expect(page.locator("html")).toHaveAttribute("lang", "ru");
});

test("the health check answers 200 with the database up", async ({ request }) => {
  const res = await request.get("/healthz");
  expect(res.status()).toBe(200);
  expect(await res.json()).toEqual({ status: "ok" });
});
