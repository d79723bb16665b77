import AxeBuilder from "@axe-core/playwright";
import { expect, Page, test } from "@playwright/test";
import { Client } from "pg";
import { LANGS, Lang, attempt, openHydrated, openPage, sandboxOf, text, showView } from "./helpers";

/** The topic, History, inbox and offset as PostgreSQL holds them, read with the test's own connection. */
async function afterCommitState(schema: string) {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const one = async (sql: string) => (await client.query(sql)).rows;
    return {
      kafka: (await one(`SELECT value::jsonb->>'event_id' AS id FROM "${schema}".kafka_log ORDER BY log_offset`)).map((r) => r.id),
      history: (await one(`SELECT event_id FROM "${schema}".history ORDER BY line`)).map((r) => r.event_id),
      inbox: (await one(`SELECT event_id FROM "${schema}".inbox`)).map((r) => r.event_id),
      marked: (await one(`SELECT published_at IS NOT NULL AS m FROM "${schema}".outbox`)).map((r) => r.m),
      offset: (await one(`SELECT next_offset FROM "${schema}".consumer_offsets`)).map((r) => Number(r.next_offset)),
    };
  } finally {
    await client.end();
  }
}

async function openAfterCommit(page: Page) {
  await showView(page, "after_commit");
  await expect(page.locator("#after-commit")).toBeVisible();
}

/** Fills one of the after-COMMIT forms and presses its button; waits for the run's result. */
async function run(page: Page, lang: Lang, form: string, fields: Record<string, string>, outcome: string) {
  await openAfterCommit(page);
  const f = page.locator(`form[data-form="${form}"]`);
  for (const [name, value] of Object.entries(fields)) {
    await f.locator(`input[name="${name}"][value="${value}"]`).check();
  }
  await f.locator("button[type=submit]").click();
  await expect(page.locator(".after-result")).toHaveAttribute("data-outcome", outcome);
  await expect(page.locator("section.outcome .outcome-title")).toContainText(text(lang, `outcome.${outcome}.title`));
}

async function rungs(page: Page): Promise<string[]> {
  return page.locator(".ladder .rung").evaluateAll((els) => els.map((e) => e.getAttribute("data-reached")!));
}

for (const lang of LANGS) {
  for (const javaScriptEnabled of [true, false]) {
    test(`the ladder is climbed after COMMIT: publisher, duplicate, inbox (${lang}, JavaScript ${javaScriptEnabled ? "on" : "off"})`, async ({
      browser,
    }) => {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await openPage(page, `/?lang=${lang}`, javaScriptEnabled);

      // 8.2: COMMIT, then the process dies. The intent is stored, nothing is delivered.
      await attempt(page, { crash: "after_commit" }, "committed_then_crashed");
      expect(await rungs(page)).toEqual(["true", "false", "false"]);
      await expect(page.locator('.rung[data-rung="intent_stored"] .rung-state')).toContainText(text(lang, "ladder.reached"));
      const schema = await sandboxOf(page);

      // 8.3: the publisher dies after the send: the event is in Kafka, the row still says NULL.
      await run(page, lang, "restart", { crash: "after_send" }, "publisher_crashed_after_send");
      await expect(page.locator('.after-mark[data-mark="after_send"]')).toHaveAttribute("data-lit", "true");
      await expect(page.locator('.publisher-failures tr[data-row="crash_after_send"]')).toHaveAttribute("aria-current", "true");
      let db = await afterCommitState(schema);
      expect(db.kafka).toEqual(["event-ticket-900"]);
      expect(db.marked).toEqual([false]);

      // The next restart sends it again: delivered at least once, twice in fact.
      await run(page, lang, "restart", { crash: "none" }, "published");
      await expect(page.locator('.publisher-failures tr[data-row="crash_after_mark"]')).toHaveAttribute("aria-current", "true");
      db = await afterCommitState(schema);
      expect(db.kafka).toEqual(["event-ticket-900", "event-ticket-900"]);
      expect(db.marked).toEqual([true]);
      expect(await rungs(page)).toEqual(["true", "true", "false"]);

      // 8.4 without an inbox: the duplicate is applied twice, the top rung is not reached.
      await run(page, lang, "consume", { inbox: "off", crash: "none" }, "duplicate_applied");
      db = await afterCommitState(schema);
      expect(db.history).toEqual(["event-ticket-900", "event-ticket-900"]);
      await expect(page.locator('table[data-table="history"] tbody tr')).toHaveCount(2);
      expect(await rungs(page)).toEqual(["true", "true", "false"]);

      // Again with the inbox, and a consumer that dies before its offset: the replay is skipped.
      await page.getByRole("button", { name: text(lang, "controls.reset"), exact: true }).click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
      await attempt(page, { crash: "none" }, "committed");
      await run(page, lang, "restart", { crash: "after_send" }, "publisher_crashed_after_send");
      await run(page, lang, "restart", { crash: "none" }, "published");
      await run(page, lang, "consume", { inbox: "on", crash: "after_apply" }, "consumer_crashed_after_apply");
      await expect(page.locator('.after-mark[data-mark="after_apply"]')).toHaveAttribute("data-lit", "true");
      db = await afterCommitState(schema);
      expect(db.history).toEqual(["event-ticket-900"]);
      expect(db.offset).toEqual([]);
      await run(page, lang, "consume", { inbox: "on", crash: "none" }, "duplicate_skipped");
      db = await afterCommitState(schema);
      expect(db.history).toEqual(["event-ticket-900"]);
      expect(db.inbox).toEqual(["event-ticket-900"]);
      expect(db.offset).toEqual([2]);
      expect(await rungs(page)).toEqual(["true", "true", "true"]);
      await expect(page.locator("[data-inbox]")).toHaveAttribute("data-inbox", "event-ticket-900");

      if (javaScriptEnabled) {
        const result = await new AxeBuilder({ page }).analyze();
        const found = result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
        expect(found, `${lang}, after COMMIT`).toEqual([]);
      }
      await context.close();
    });
  }
}

test("Trace A after a crash after COMMIT: the restarted publisher finds nothing to send", async ({ page }) => {
  const lang = "en";
  await openHydrated(page, "/?lang=en");
  await page.locator('input[name="mode"][value="naive"]').check();
  await attempt(page, { crash: "after_commit" }, "naive_event_lost");
  await run(page, lang, "restart", { crash: "none" }, "nothing_to_publish");
  expect(await rungs(page)).toEqual(["false", "false", "false"]);
  const db = await afterCommitState(await sandboxOf(page));
  expect(db.kafka).toEqual([]);
});

for (const lang of LANGS) {
  for (const javaScriptEnabled of [true, false]) {
    test(`a mark that dies before COMMIT, and a consumer that dies inside its transaction (${lang}, JavaScript ${javaScriptEnabled ? "on" : "off"})`, async ({
      browser,
    }) => {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await openPage(page, `/?lang=${lang}`, javaScriptEnabled);
      await attempt(page, { crash: "none" }, "committed");
      const schema = await sandboxOf(page);

      // The publisher marks the row, then dies before COMMIT: PostgreSQL takes the mark back.
      // The learner predicts one send and a mark that sticks.
      await openAfterCommit(page);
      const restart = page.locator('form[data-form="restart"]');
      await restart.locator("details.after-predict summary").click();
      await restart.locator('input[name="predict_sends"][value="one"]').check();
      await restart.locator('input[name="predict_mark"][value="set"]').check();
      await run(page, lang, "restart", { crash: "after_mark" }, "publisher_crashed_after_mark");
      const judged = page.locator(".after-result .judgement");
      await expect(judged.locator('li[data-item="sends"]')).toHaveAttribute("data-right", "true");
      await expect(judged.locator('li[data-item="mark"]')).toHaveAttribute("data-right", "false");
      await expect(judged.locator('li[data-item="mark"] .why')).toHaveText(text(lang, "prediction.why.mark_needs_commit"));
      await expect(page.locator('.after-mark[data-mark="after_mark"]')).toHaveAttribute("data-lit", "true");
      await expect(page.locator('.publisher-failures tr[data-row="crash_after_send"]')).toHaveAttribute("aria-current", "true");
      let db = await afterCommitState(schema);
      expect(db.kafka).toEqual(["event-ticket-900"]);
      expect(db.marked).toEqual([false]);

      // The consumer dies inside the event's transaction: no History line, no inbox row, no offset.
      await run(page, lang, "consume", { inbox: "on", crash: "before_commit" }, "consumer_crashed_before_commit");
      await expect(page.locator('.after-mark[data-mark="before_commit"]')).toHaveAttribute("data-lit", "true");
      db = await afterCommitState(schema);
      expect(db.history).toEqual([]);
      expect(db.inbox).toEqual([]);
      expect(db.offset).toEqual([]);

      // The next run reads the same event and applies it once.
      await run(page, lang, "consume", { inbox: "on", crash: "none" }, "consumed");
      db = await afterCommitState(schema);
      expect(db.history).toEqual(["event-ticket-900"]);
      expect(db.offset).toEqual([1]);
      await context.close();
    });
  }
}

for (const lang of LANGS) {
  test(`at 1280×800 each one-shot run after COMMIT keeps the page short and its result in view (${lang})`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await openHydrated(page, `/?lang=${lang}`);
    await attempt(page, { crash: "none" }, "committed");
    const runs: [string, Record<string, string>, string][] = [
      ["restart", { crash: "after_send" }, "publisher_crashed_after_send"],
      ["publish_race", { skip_locked: "off" }, "publish_race_waited"],
      ["consume", { inbox: "off", crash: "none" }, "duplicate_applied"],
    ];
    for (const [form, fields, expected] of runs) {
      await run(page, lang, form, fields, expected);
      // Measured from the boxes the browser reports: the page, and the run's result where the
      // learner is looking (the window scrolled as it was when they pressed the button).
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      expect(height, `${form}: page height`).toBeLessThanOrEqual(2000);
      const panel = (await page.locator("section.outcome").boundingBox())!;
      expect(panel.y, `${form}: the outcome starts in the viewport`).toBeGreaterThanOrEqual(0);
      expect(panel.y + panel.height, `${form}: the outcome ends in the viewport`).toBeLessThanOrEqual(800);
      const result = (await page.locator(".after-result").boundingBox())!;
      expect(result.y + result.height, `${form}: the run's own result ends in the viewport`).toBeLessThanOrEqual(800);
      // The pressed button is still on the screen.
      const button = (await page.locator(`form[data-form="${form}"] button[type=submit]`).boundingBox())!;
      expect(button.y, `${form}: the pressed button stays in view`).toBeGreaterThanOrEqual(0);
    }
  });
}
