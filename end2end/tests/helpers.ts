import { expect, Page } from "@playwright/test";
import * as fs from "fs";
import * as path from "path";
import { Client } from "pg";

export type Lang = "ru" | "en";
export const LANGS: Lang[] = ["ru", "en"];

/** The UI's own texts, so tests check the words a learner reads in each language. */
const locales: Record<Lang, any> = {
  ru: JSON.parse(fs.readFileSync(path.join(__dirname, "../../app/locales/ru.json"), "utf8")),
  en: JSON.parse(fs.readFileSync(path.join(__dirname, "../../app/locales/en.json"), "utf8")),
};

/** A text of the UI by its dotted key, e.g. text("en", "outcome.committed.title"). */
export function text(lang: Lang, key: string): string {
  const value = key.split(".").reduce((node, k) => node?.[k], locales[lang]);
  if (typeof value !== "string") throw new Error(`no text ${key} in ${lang}`);
  return value;
}

/** Opens a page and waits until the WebAssembly has hydrated it. */
export async function openHydrated(page: Page, path = "/"): Promise<void> {
  await page.goto(path);
  await expect(page.locator("html")).toHaveAttribute("data-hydrated", "true");
}

/** Opens `path`: hydrated when JavaScript is on, as the server rendered it when it is off. */
export async function openPage(page: Page, path: string, javaScriptEnabled: boolean): Promise<void> {
  if (javaScriptEnabled) await openHydrated(page, path);
  else await page.goto(path);
}

/** The status cell of a ticket row in the page's tickets table. */
export function ticketStatus(page: Page, id = "ticket-42") {
  return page.locator(`table[data-table="tickets"] tr[data-id="${id}"] [data-col="status"]`);
}

export interface AttemptOptions {
  crash?: string;
  fate?: string;
  payload?: string;
}

/** Fills the attempt form and presses "Resolve ticket-42"; waits for the outcome. */
/** Shows one of the page's two views (the ticket function or after COMMIT), as a learner does: by its tab. */
export async function showView(page: Page, view: "ticket" | "after_commit"): Promise<void> {
  const radio = page.locator(`#view-${view}`);
  if (!(await radio.isChecked())) await page.locator(`label.view-tab:has(#view-${view})`).click();
  await expect(radio).toBeChecked();
}

export async function attempt(page: Page, opts: AttemptOptions, outcome: string): Promise<void> {
  await showView(page, "ticket");
  await page.locator(`#attempt-form input[name="crash"][value="${opts.crash ?? "none"}"]`).check();
  if (opts.fate) await page.locator(`input[name="commit_fate"][value="${opts.fate}"]`).check();
  if (opts.payload !== undefined) {
    await page.locator("details.event summary").click();
    await page.locator('textarea[name="payload"]').fill(opts.payload);
  }
  await page.locator("#attempt-form button[type=submit]").click();
  await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", outcome);
}

/** Presses one of the other action buttons (reconcile, reopen, reset) by its label. */
export async function press(page: Page, lang: Lang, action: "reconcile" | "reopen" | "reset") {
  await page.getByRole("button", { name: text(lang, `controls.${action}`), exact: true }).click();
}

/** The sandbox's schema, as the page shows it. */
export async function sandboxOf(page: Page): Promise<string> {
  const name = (await page.locator("[data-sandbox]").innerText()).trim();
  // Used in SQL below, so accept only the server's own pattern.
  expect(name).toMatch(/^sb_[a-z2-7]{20}$/);
  return name;
}

export interface DbState {
  tickets: { id: string; status: string }[];
  outbox: { event_id: string; published_at: string | null }[];
}

/** What the sandbox really holds in PostgreSQL, read with a connection of the test's own. */
export async function dbState(schema: string): Promise<DbState> {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const tickets = await client.query(
      `SELECT id, status FROM "${schema}".tickets ORDER BY id COLLATE "C"`,
    );
    const outbox = await client.query(
      `SELECT event_id, published_at FROM "${schema}".outbox ORDER BY event_id COLLATE "C"`,
    );
    return { tickets: tickets.rows, outbox: outbox.rows };
  } finally {
    await client.end();
  }
}

/** The tickets and outbox tables as the page shows them. */
export async function pageState(page: Page): Promise<DbState> {
  const tickets = await page
    .locator('table[data-table="tickets"] tbody tr[data-id]:not([data-change="removed"])')
    .evaluateAll((rows) =>
      rows.map((r) => ({
        id: r.getAttribute("data-id")!,
        status: r.querySelector('[data-col="status"]')!.textContent!.trim(),
      })),
    );
  const outbox = await page
    .locator('table[data-table="outbox"] tbody tr[data-id]:not([data-change="removed"])')
    .evaluateAll((rows) =>
      rows.map((r) => {
        const published = r.querySelector('[data-col="published_at"]')!.textContent!.trim();
        return { event_id: r.getAttribute("data-id")!, published_at: published === "NULL" ? null : published };
      }),
    );
  return { tickets, outbox };
}

/** The page's tables must be exactly what PostgreSQL holds for the page's sandbox. */
export async function expectPageMatchesDatabase(page: Page): Promise<DbState> {
  const schema = await sandboxOf(page);
  const db = await dbState(schema);
  const shown = await pageState(page);
  expect(shown.tickets).toEqual(db.tickets);
  expect(shown.outbox.map((r) => r.event_id)).toEqual(db.outbox.map((r) => r.event_id));
  expect(shown.outbox.every((r) => r.published_at === null)).toBe(
    db.outbox.every((r) => r.published_at === null),
  );
  return db;
}

/** Unfolds the comparison panel (folded until the learner uses it). */
export async function openCompare(page: Page) {
  const fold = page.locator("details.compare-fold");
  if ((await fold.getAttribute("open")) === null) await fold.locator("summary").click();
  await expect(page.locator("#compare-form")).toBeVisible();
}
