import AxeBuilder from "@axe-core/playwright";
import { expect, Page, test } from "@playwright/test";
import { Client } from "pg";
import { LANGS, Lang, attempt, openHydrated, sandboxOf, text, showView } from "./helpers";

/** A cell of the stepper's two-sided table. */
function cell(page: Page, row: string, side: "inside" | "outside") {
  return page.locator(`.stepper tr[data-row="${row}"] td[data-side="${side}"]`);
}

async function openAfterCommit(page: Page) {
  await showView(page, "after_commit");
  await expect(page.locator("#after-commit")).toBeVisible();
}

async function held(page: Page, scenario: string, at: string) {
  const stepper = page.locator(".stepper");
  await expect(stepper).toHaveAttribute("data-scenario", scenario);
  await expect(stepper).toHaveAttribute("data-at", at);
  await expect(stepper).toHaveAttribute("aria-busy", "false");
}

async function next(page: Page, scenario: string, at: string) {
  await page.locator('.stepper [data-cmd="next"]').click();
  await held(page, scenario, at);
}

/** One number from PostgreSQL itself, on the test's own connection. */
async function ask(sql: string, params: unknown[] = []): Promise<number> {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const r = await client.query(sql, params);
    return Number(Object.values(r.rows[0])[0]);
  } finally {
    await client.end();
  }
}

/** The pauses as the server drew them, taken from the socket's frames as they arrive. */
function drawnPauses(page: Page): { where: string; html: string }[] {
  const drawn: { where: string; html: string }[] = [];
  page.on("websocket", (ws) =>
    ws.on("framereceived", (frame) => {
      try {
        const m = JSON.parse(String(frame.payload));
        if (m.pause) drawn.push(m.view);
      } catch {
        /* not a message of ours */
      }
    }),
  );
  return drawn;
}

/**
 * The panel shows the last pause exactly as the server drew it (the script only swapped it
 * in), and every word in it is of the page's language.
 */
async function oneLanguage(page: Page, lang: Lang, drawn: { where: string; html: string }[]) {
  const last = drawn[drawn.length - 1];
  expect(last?.html, "each pause arrives drawn by the server").toBeTruthy();
  await expect(page.locator(".stepper [data-step-where]")).toHaveText(last.where);
  const drawnText = await page.evaluate((html) => {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content.textContent;
  }, last.html);
  expect(await page.locator(".stepper [data-step-view]").textContent()).toBe(drawnText);
  const said = (
    await page
      .locator(".stepper [data-step-where], .stepper [data-pg], .stepper [data-side], .stepper th, .stepper caption, .stepper summary")
      .allInnerTexts()
  ).join(" ");
  // PostgreSQL's and the lesson's own names (pid, SKIP LOCKED, published_at, event ids) stay.
  if (lang === "ru") expect(said).not.toMatch(/\b(Paused|Next step|waiting|finished|backend|none yet|Inside|session|SQL so far)\b/);
  else expect(said).not.toMatch(/[А-Яа-яЁё]/);
}

for (const lang of LANGS) {
  test.describe(`the publisher and the consumer step by step (${lang})`, () => {
    test("a held publisher locks its row: a second one with FOR UPDATE waits, then takes the row after the crash", async ({
      page,
    }) => {
      const drawn = drawnPauses(page);
      await openHydrated(page, `/?lang=${lang}`);
      await page.getByRole("button", { name: text(lang, "controls.reset"), exact: true }).click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
      await attempt(page, { crash: "none" }, "committed");
      const schema = await sandboxOf(page);
      await openAfterCommit(page);
      await page.getByRole("button", { name: text(lang, "stepper.start_publisher") }).click();
      await held(page, "publisher", "before_send");
      await expect(page.locator(".after-strip .after-mark[data-mark='before_send']")).toHaveAttribute("data-held", "true");
      await expect(page.locator('.stepper [data-cmd="other_writer"]')).toBeHidden();
      await expect(page.locator("[data-step-lost]")).toBeHidden();
      const pid = await page.locator('[data-pg="pid"]').innerText();
      await expect(page.locator('[data-pg="locks"]')).toContainText("outbox: RowShareLock");

      // The second publisher without SKIP LOCKED waits for the held row lock.
      await page.getByRole("button", { name: text(lang, "stepper.other_publisher_wait") }).click();
      await expect(page.locator('[data-pg="waiter"]')).toContainText(`{${pid}}`);
      await expect(page.locator('[data-cmd="other_publisher"]').first()).toBeHidden();
      const second = Number((await page.locator('[data-pg="waiter"]').innerText()).match(/(\d+):/)![1]);
      // PostgreSQL itself says who waits for whom.
      expect(await ask("SELECT (pg_blocking_pids($1::int))[1]", [second])).toBe(Number(pid));
      await oneLanguage(page, lang, drawn);
      const axe = await new AxeBuilder({ page }).analyze();
      expect(axe.violations, JSON.stringify(axe.violations, null, 2)).toEqual([]);

      // Sent, then marked inside the transaction only.
      await next(page, "publisher", "after_send");
      await expect(cell(page, "kafka", "outside")).toHaveText("1");
      await next(page, "publisher", "after_mark");
      await expect(cell(page, "marked", "inside")).toHaveText("1");
      await expect(cell(page, "marked", "outside")).toHaveText("0");
      expect(await ask(`SELECT count(*) FROM "${schema}".outbox WHERE published_at IS NOT NULL`)).toBe(0);

      // The held publisher dies: its mark rolls back, the waiting one takes the row, sends it
      // again and marks it.
      await page.getByRole("button", { name: text(lang, "stepper.crash") }).click();
      await expect(page.locator(".after-result")).toHaveAttribute("data-outcome", "publisher_crashed_after_mark");
      await expect(page.locator(".stepper")).toBeHidden();
      expect(await ask(`SELECT count(*) FROM "${schema}".kafka_log`)).toBe(2);
      expect(await ask(`SELECT count(*) FROM "${schema}".outbox WHERE published_at IS NOT NULL`)).toBe(1);
      expect(await ask("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int", [Number(pid)])).toBe(0);
    });

    test("a consumer held inside its transaction: History and the inbox inside only; a crash before the offset replays", async ({
      page,
    }) => {
      const drawn = drawnPauses(page);
      await openHydrated(page, `/?lang=${lang}`);
      await page.getByRole("button", { name: text(lang, "controls.reset"), exact: true }).click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
      await attempt(page, { crash: "none" }, "committed");
      const schema = await sandboxOf(page);
      await openAfterCommit(page);
      await page.locator('form[data-form="restart"] button[type=submit]').click();
      await expect(page.locator(".after-result")).toHaveAttribute("data-outcome", "published");

      await page.locator('form[data-form="consume"] input[name="inbox"][value="on"]').check();
      await page.getByRole("button", { name: text(lang, "stepper.start_consumer") }).click();
      await held(page, "consumer", "before_commit");
      await expect(cell(page, "history", "inside")).toHaveText("1");
      await expect(cell(page, "history", "outside")).toHaveText("0");
      await expect(cell(page, "inbox", "inside")).toHaveText("event-ticket-900");
      await expect(cell(page, "inbox", "outside")).toHaveText(text(lang, "stepper.none"));
      expect(await ask(`SELECT count(*) FROM "${schema}".history`)).toBe(0);
      await expect(page.locator('[data-cmd="other_publisher"]').first()).toBeHidden();
      await oneLanguage(page, lang, drawn);

      await next(page, "consumer", "after_apply");
      await expect(cell(page, "history", "outside")).toHaveText("1");
      await page.getByRole("button", { name: text(lang, "stepper.crash") }).click();
      await expect(page.locator(".after-result")).toHaveAttribute("data-outcome", "consumer_crashed_after_apply");
      expect(await ask(`SELECT count(*) FROM "${schema}".consumer_offsets`)).toBe(0);

      // The replay: the same event comes again, and the inbox skips it.
      await page.locator('form[data-form="consume"] input[name="crash"][value="none"]').check();
      await page.locator('form[data-form="consume"] button[type=submit]').click();
      await expect(page.locator(".after-result")).toHaveAttribute("data-outcome", "duplicate_skipped");
      expect(await ask(`SELECT count(*) FROM "${schema}".history`)).toBe(1);
    });
  });
}

test("without JavaScript the after-COMMIT step buttons are not offered", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto("/?lang=ru");
  await expect(page.locator('[data-step-start][data-scenario="publisher"]')).toBeHidden();
  await expect(page.locator('[data-step-start][data-scenario="consumer"]')).toBeHidden();
  await context.close();
});
