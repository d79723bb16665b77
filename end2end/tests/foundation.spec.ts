import { expect, test } from "@playwright/test";
import { openHydrated, ticketStatus } from "./helpers";

test("the server's HTML already shows ticket-42 open, in Russian", async ({ request }) => {
  const html = await (await request.get("/")).text();
  expect(html).toContain('<html lang="ru"');
  expect(html).toContain("ticket-42");
  expect(html).toMatch(/data-col="status">open/);
});

test("the page hydrates and its controls react only then", async ({ page }) => {
  await openHydrated(page);
  await expect(ticketStatus(page)).toHaveText("open");
  const notes = page.locator("#column-notes");
  await expect(notes).toBeHidden();
  await page.getByRole("button", { name: /смысл столбцов/ }).click();
  await expect(notes).toBeVisible();
  await expect(notes).toContainText("event_id");
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
