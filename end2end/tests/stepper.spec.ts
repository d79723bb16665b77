import AxeBuilder from "@axe-core/playwright";
import { expect, Page, test } from "@playwright/test";
import { Client } from "pg";
import { dbState, LANGS, openHydrated, sandboxOf, text } from "./helpers";

/** The cell of the stepper's two-sided table: ticket-42's status, the outbox rows, … */
function cell(page: Page, row: string, side: "inside" | "outside") {
  return page.locator(`.stepper tr[data-row="${row}"] td[data-side="${side}"]`);
}

async function startStepping(page: Page, lang: string) {
  await page.getByRole("button", { name: text(lang as "ru", "stepper.start") }).click();
  await expect(page.locator(".stepper")).toBeVisible();
  await expect(page.locator(".stepper")).toHaveAttribute("data-at", "after_begin");
}

async function next(page: Page, lang: string, at: string) {
  await page.locator('.stepper [data-cmd="next"]').click();
  await expect(page.locator(".stepper")).toHaveAttribute("data-at", at);
  await expect(page.locator(".stepper")).toHaveAttribute("aria-busy", "false");
}

/** The stepped backend as PostgreSQL itself reports it (not as the page says). */
async function backendState(pid: number): Promise<string | null> {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const r = await client.query("SELECT state FROM pg_stat_activity WHERE pid = $1", [pid]);
    return r.rows[0]?.state ?? null;
  } finally {
    await client.end();
  }
}

for (const lang of LANGS) {
  test.describe(`step by step (${lang})`, () => {
    test("through to COMMIT: the two sessions differ until COMMIT and agree after it", async ({ page }) => {
      await openHydrated(page, `/?lang=${lang}`);
      await page.getByRole("button", { name: text(lang, "controls.reset"), exact: true }).click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
      await startStepping(page, lang);
      await expect(page.locator(".strip label.mark[data-mark='after_begin']")).toHaveAttribute("data-held", "true");
      await expect(page.locator('[data-pg="xid"]')).toHaveText(text(lang, "stepper.xid_none"));

      await next(page, lang, "after_update");
      await expect(cell(page, "status", "inside")).toHaveText("resolved");
      await expect(cell(page, "status", "outside")).toHaveText("open");
      // The page's pid is a real backend, idle in a transaction, as PostgreSQL says.
      const pid = Number(await page.locator('[data-pg="pid"]').innerText());
      expect(await backendState(pid)).toBe("idle in transaction");
      await expect(page.locator('[data-pg="xid"]')).toHaveText(/^\d+$/);

      await next(page, lang, "after_insert");
      await expect(cell(page, "outbox", "inside")).toHaveText("event-ticket-900");
      await expect(cell(page, "outbox", "outside")).toHaveText(text(lang, "stepper.none"));
      // Outside really sees nothing yet.
      const sandbox = await sandboxOf(page);
      expect((await dbState(sandbox)).outbox).toEqual([]);

      await next(page, lang, "after_commit");
      await expect(cell(page, "outbox", "outside")).toHaveText("event-ticket-900");
      await expect(page.locator('.stepper tr[data-row="status"]')).toHaveAttribute("data-differs", "false");
      await expect(page.locator('.stepper tr[data-row="outbox"]')).toHaveAttribute("data-differs", "false");
      await expect(cell(page, "status", "outside")).toHaveText("resolved");

      await page.locator('.stepper [data-cmd="next"]').click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "committed");
      await expect(page.locator(".stepper")).toBeHidden();
      expect((await dbState(sandbox)).tickets[0].status).toBe("resolved");
    });

    test("a crash after the INSERT leaves nothing, and another writer waits and is released", async ({ page }) => {
      await openHydrated(page, `/?lang=${lang}`);
      await page.getByRole("button", { name: text(lang, "controls.reset"), exact: true }).click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
      await startStepping(page, lang);
      await next(page, lang, "after_update");
      await next(page, lang, "after_insert");
      const held = await page.locator('[data-pg="pid"]').innerText();

      await page.locator('.stepper [data-cmd="other_writer"]').click();
      const waiter = page.locator('[data-pg="waiter"]');
      await expect(waiter).toContainText(text(lang, "stepper.waiting"));
      await expect(waiter).toContainText(`{${held}}`);
      await expect(waiter).toContainText(text(lang, "stepper.backend_pid"));
      // Every word the script writes into the panel comes from the page's language (the
      // labels beside them are PostgreSQL's own names: pid, state, xid).
      const said = (
        await page.locator(".stepper [data-step-where], .stepper [data-pg], .stepper [data-side]").allInnerTexts()
      ).join(" ");
      if (lang === "ru") expect(said).not.toMatch(/\bpid\b|\(waiting\)|\bbackend\b/);
      else expect(said).not.toMatch(/[А-Яа-яЁё]/);
      const axe = await new AxeBuilder({ page }).analyze();
      expect(axe.violations, JSON.stringify(axe.violations, null, 2)).toEqual([]);

      await page.getByRole("button", { name: text(lang, "stepper.crash") }).click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "crashed_before_commit");
      // The held backend is gone; the other writer went on and resolved the ticket itself,
      // with no outbox row: the row lock had only made it wait.
      expect(await backendState(Number(held))).toBeNull();
      const state = await dbState(await sandboxOf(page));
      expect(state.tickets[0].status).toBe("resolved");
      expect(state.outbox).toEqual([]);
    });
  });
}

test("without JavaScript the mode is not offered and the page says why", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto("/?lang=en");
  await expect(page.locator(".step-nojs")).toBeVisible();
  await expect(page.locator(".step-nojs")).toHaveText(text("en", "stepper.nojs"));
  // The ticket function's, the publisher's and the consumer's.
  await expect(page.locator("[data-step-start]")).toHaveCount(3);
  for (const start of await page.locator("[data-step-start]").all()) await expect(start).toBeHidden();
  await context.close();
});
