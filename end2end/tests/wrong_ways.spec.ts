import { expect, Page, test } from "@playwright/test";
import { Client } from "pg";
import { LANGS, Lang, openHydrated, text, openCompare } from "./helpers";

/** Counts of rows in one sandbox's tables, read straight from PostgreSQL. */
async function dbCounts(schema: string) {
  expect(schema).toMatch(/^sb_[a-z2-7]{20}$/);
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const one = async (sql: string) => (await client.query(sql)).rows;
    const tickets = await one(`SELECT status FROM "${schema}".tickets WHERE id = 'ticket-42'`);
    const outbox = await one(`SELECT event_id FROM "${schema}".outbox ORDER BY event_id COLLATE "C"`);
    const kafka = await one(`SELECT log_offset FROM "${schema}".kafka_log`);
    const history = await one(`SELECT event_id FROM "${schema}".history`);
    return {
      status: tickets[0]?.status as string,
      outbox: outbox.map((r) => r.event_id as string),
      kafka: kafka.length,
      history: history.length,
    };
  } finally {
    await client.end();
  }
}

async function sandboxIn(page: Page, scope: string): Promise<string> {
  return (await page.locator(`${scope} [data-sandbox]`).first().innerText()).trim();
}

for (const lang of LANGS) {
  test.describe(`wrong ways (${lang})`, () => {
    test("a race shows two lanes, B's lock wait, and exactly one winner", async ({ page }) => {
      await openHydrated(page, `/?lang=${lang}`);
      await page.getByRole("button", { name: text(lang, "controls.race"), exact: true }).click();
      const outcome = page.locator("section.outcome");
      await expect(outcome).toHaveAttribute("data-outcome", "race_one_winner");
      await expect(outcome.locator(".outcome-title")).toContainText(
        text(lang, "outcome.race_one_winner.title"),
      );
      await expect(outcome.locator('[data-race="lanes"]')).toHaveAttribute("data-b", "guard_rejected");
      await expect(outcome.locator('[data-race="lock_wait"]')).toBeVisible();

      const lanes = page.locator('ol.trace.lanes[data-race="true"]');
      await expect(lanes).toBeVisible();
      await expect(lanes.locator("li.lane-step[data-lane='a']").first()).toBeVisible();
      // B's UPDATE, the wait seen by PostgreSQL, and B's rollback, all in B's lane.
      const laneB = lanes.locator("li.lane-step[data-lane='b']");
      await expect(laneB.filter({ hasText: "UPDATE tickets" })).toHaveCount(1);
      await expect(laneB.locator('[data-event="lock_wait"]')).toHaveCount(1);
      await expect(laneB.filter({ hasText: "ROLLBACK" })).toHaveCount(1);
      // Side by side on a wide screen: A's steps sit left of B's.
      const a = await lanes.locator("li.lane-step[data-lane='a']").first().boundingBox();
      const b = await laneB.first().boundingBox();
      expect(a!.x).toBeLessThan(b!.x);

      const db = await dbCounts(await sandboxIn(page, "section.tables"));
      expect(db).toEqual({ status: "resolved", outbox: ["event-ticket-900"], kafka: 0, history: 0 });

      // Without the guard both requests win.
      await page.getByRole("button", { name: text(lang, "controls.reset"), exact: true }).click();
      await expect(outcome).toHaveAttribute("data-action", "reset");
      await page.getByLabel(text(lang, "controls.race_unguarded")).check();
      await page.getByRole("button", { name: text(lang, "controls.race"), exact: true }).click();
      await expect(outcome).toHaveAttribute("data-outcome", "race_two_winners");
      const after = await dbCounts(await sandboxIn(page, "section.tables"));
      expect(after.outbox).toEqual(["event-ticket-900", "event-ticket-901"]);
    });

    test("Trace A after COMMIT loses the event in the main form", async ({ page }) => {
      await openHydrated(page, `/?lang=${lang}`);
      await page.locator('input[name="mode"][value="naive"]').check();
      // The naive code has no INSERT, so that crash point is not offered.
      await expect(page.locator('input[name="crash"][value="after_insert"]')).toBeDisabled();
      await expect(page.locator('select[name="mistakes"]')).toBeDisabled();
      await page.locator('input[name="crash"][value="after_commit"]').check();
      await page.locator("#attempt-form button[type=submit]").click();
      const outcome = page.locator("section.outcome");
      await expect(outcome).toHaveAttribute("data-outcome", "naive_event_lost");
      await expect(outcome.locator(".outcome-title")).toContainText(
        text(lang, "outcome.naive_event_lost.title"),
      );
      await expect(page.locator('.results table[data-table="kafka"] tbody')).toContainText(
        text(lang, "tables.kafka_empty"),
      );
      const db = await dbCounts(await sandboxIn(page, "section.tables"));
      expect(db).toEqual({ status: "resolved", outbox: [], kafka: 0, history: 0 });
    });

    test("the compare view puts the outbox beside Trace A and says what differs", async ({ page }) => {
      await openHydrated(page, `/?lang=${lang}`);
      // The learner's own sandbox comes with their first action.
      await page.getByRole("button", { name: text(lang, "controls.reset"), exact: true }).click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
      const mainBefore = await dbCounts(await sandboxIn(page, "section.tables"));
      await openCompare(page);
      const form = page.locator("#compare-form");

      await form.locator('select[name="way"]').selectOption("naive");
      await form.locator('select[name="crash"]').selectOption("after_commit");
      await form.locator("button[type=submit]").click();
      const difference = page.locator("section.compare .difference");
      await expect(difference).toHaveAttribute("data-difference", "status_without_event");
      await expect(difference).toHaveText(text(lang, "compare.difference.status_without_event"));
      const outboxSide = page.locator('.compare-side[data-side="outbox"]');
      const wrongSide = page.locator('.compare-side[data-side="wrong"]');
      await expect(outboxSide).toHaveAttribute("data-outcome", "committed_then_crashed");
      await expect(wrongSide).toHaveAttribute("data-outcome", "naive_event_lost");
      await expect(wrongSide.locator("h3")).toContainText(text(lang, "mode.naive.label"));
      expect(await dbCounts(await sandboxIn(page, '.compare-side[data-side="outbox"]'))).toEqual({
        status: "resolved",
        outbox: ["event-ticket-900"],
        kafka: 0,
        history: 0,
      });
      expect(await dbCounts(await sandboxIn(page, '.compare-side[data-side="wrong"]'))).toEqual({
        status: "resolved",
        outbox: [],
        kafka: 0,
        history: 0,
      });

      await form.locator('select[name="way"]').selectOption("naive_publish_first");
      await form.locator('select[name="crash"]').selectOption("after_publish");
      await form.locator("button[type=submit]").click();
      await expect(difference).toHaveAttribute("data-difference", "phantom_event");
      await expect(difference).toHaveText(text(lang, "compare.difference.phantom_event"));
      await expect(wrongSide.locator('table[data-table="kafka"] tbody tr')).toHaveCount(1);
      await expect(wrongSide.locator('table[data-table="tickets"] [data-col="status"]')).toHaveText("open");

      // An impossible pair is refused in the learner's language, and nothing moves.
      await form.locator('select[name="way"]').selectOption("naive");
      await form.locator('select[name="crash"]').selectOption("after_insert");
      await form.locator("button[type=submit]").click();
      await expect(page.locator("section.compare .error")).toHaveAttribute(
        "data-code",
        "crash_point_not_in_mode",
      );

      // The learner's own sandbox never moved, and the comparison survives a reload.
      expect(await dbCounts(await sandboxIn(page, "section.tables"))).toEqual(mainBefore);
      await page.reload();
      await expect(page.locator("section.compare .difference")).toHaveAttribute(
        "data-difference",
        "phantom_event",
      );
    });
  });
}
