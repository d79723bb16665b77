import AxeBuilder from "@axe-core/playwright";
import { expect, Page, test } from "@playwright/test";
import * as fs from "fs";
import * as path from "path";
import { LANGS, Lang, dbState, openHydrated, openPage, sandboxOf, text } from "./helpers";

const COURSE = "http://localhost:4321";
const FIXTURE = fs.readFileSync(path.join(__dirname, "..", "fixtures", "course-page.html"), "utf8");

async function openPrediction(page: Page) {
  const fold = page.locator("details.predict");
  if (!(await fold.evaluate((d) => (d as HTMLDetailsElement).open))) await fold.locator("summary").click();
}

async function predict(page: Page, values: Record<string, string>) {
  await openPrediction(page);
  for (const [item, value] of Object.entries(values)) {
    await page.locator(`input[name="predict_${item}"][value="${value}"]`).check();
  }
}

async function run(page: Page, crash: string, outcome: string) {
  await page.locator(`#attempt-form input[name="crash"][value="${crash}"]`).check();
  await page.locator("#attempt-form button[type=submit]").click();
  await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", outcome);
}

async function noViolations(page: Page, what: string) {
  const result = await new AxeBuilder({ page }).analyze();
  const found = result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(found, what).toEqual([]);
}

for (const lang of LANGS) {
  for (const javaScriptEnabled of [true, false]) {
    test(`predict first hides the tables until predicted; a wrong prediction says why (${lang}, JavaScript ${javaScriptEnabled ? "on" : "off"})`, async ({
      browser,
    }) => {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await openPage(page, `/?lang=${lang}`, javaScriptEnabled);
      const tickets = page.locator('table[data-table="tickets"]');
      const reveal = page.locator("details.reveal");

      // Off on the main page: the result shows at once.
      await run(page, "after_update", "crashed_after_update");
      await expect(reveal).toHaveCount(0);
      await expect(tickets).toBeVisible();

      // On: an attempt without a prediction keeps its tables folded until "just show me".
      await openPrediction(page);
      await page.getByRole("button", { name: text(lang, "prediction.turn_on"), exact: true }).click();
      await expect(page.getByRole("button", { name: text(lang, "prediction.turn_off"), exact: true })).toBeVisible();
      await run(page, "after_insert", "crashed_before_commit");
      await expect(reveal).toHaveCount(1);
      await expect(tickets).toBeHidden();
      await reveal.locator("> summary").click();
      await expect(tickets).toBeVisible();

      // Predicted: the tables show, and each item is judged against what PostgreSQL holds.
      await predict(page, { ticket: "resolved", outbox: "none", client: "unknown" });
      await run(page, "after_update", "crashed_after_update");
      await expect(reveal).toHaveCount(0);
      await expect(tickets).toBeVisible();
      const judged = page.locator("section.outcome .judgement");
      await expect(judged.locator('li[data-item="ticket"]')).toHaveAttribute("data-right", "false");
      await expect(judged.locator('li[data-item="ticket"] .why')).toHaveText(
        text(lang, "prediction.why.unfinished_rolled_back"),
      );
      await expect(judged.locator('li[data-item="outbox"]')).toHaveAttribute("data-right", "true");
      await expect(judged.locator('li[data-item="client"]')).toHaveAttribute("data-right", "true");
      await expect(judged.locator("li")).toHaveCount(3);
      const schema = await sandboxOf(page);
      expect((await dbState(schema)).tickets).toEqual([{ id: "ticket-42", status: "open" }]);

      // The map: two rows explored, the last one predicted wrong.
      const map = page.locator(".progress");
      await expect(map).toHaveAttribute("data-explored", "2");
      await expect(page.locator('tr[data-row="crash_after_update"] .row-mark')).toContainText(
        text(lang, "prediction.row_wrong"),
      );
      await expect(page.locator('tr[data-row="crash_before_commit"] .row-mark')).toContainText(
        text(lang, "prediction.row_explored"),
      );
      if (javaScriptEnabled) await noViolations(page, `${lang}, judged`);

      // Reset keeps the map; start over clears it.
      await page.getByRole("button", { name: text(lang, "controls.reset"), exact: true }).click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
      await expect(map).toHaveAttribute("data-explored", "2");
      await page.getByRole("button", { name: text(lang, "prediction.start_over"), exact: true }).click();
      await expect(map).toHaveAttribute("data-explored", "0");
      expect((await dbState(schema)).outbox).toEqual([]);
      await context.close();
    });
  }
}

test("the embed tells its course page the learner's progress after every action", async ({ page, baseURL }) => {
  await page.route(`${COURSE}/**`, (r) => r.fulfill({ contentType: "text/html; charset=utf-8", body: FIXTURE }));
  await page.goto(`${COURSE}/course-page.html?playground=${encodeURIComponent(baseURL!)}`);
  const first = page.frameLocator("iframe.playground >> nth=0");
  const badge = page.locator(".playground-progress >> nth=0");
  // The preset attempt on load (committed, then the process died) explored one row.
  await expect(first.locator("section.outcome")).toHaveAttribute("data-outcome", "committed_then_crashed");
  await expect(badge).toHaveAttribute("data-explored", "1");
  await expect(badge).toHaveAttribute("data-total", "6");
  // The publisher's and the consumer's maps ride along, per scenario.
  await expect(badge).toHaveAttribute("data-after-commit", "publisher:0/3 consumer:0/5");
  await expect(first.locator("html")).toHaveAttribute("data-hydrated", "true");

  // The embed predicts first by default: the form's prediction is open.
  await expect(first.locator("details.predict")).toHaveAttribute("open", "");
  // ticket-42 is resolved already: the guard refuses, and the ticket stays resolved.
  await first.locator('input[name="predict_ticket"][value="resolved"]').check();
  await first.locator('input[name="predict_kafka"][value="none"]').check();
  await first.locator('#attempt-form input[name="crash"][value="none"]').check();
  await first.locator("#attempt-form button[type=submit]").click();
  await expect(first.locator("section.outcome")).toHaveAttribute("data-outcome", "guard_rejected");
  await expect(badge).toHaveAttribute("data-explored", "2");
  await expect(badge).toHaveAttribute("data-made", "1");
  await expect(badge).toHaveAttribute("data-right", "1");
  await expect(badge).toHaveAttribute("data-last-row", "guard_zero_rows");
  await expect(badge).toHaveAttribute("data-last-right", "true");
  // The other frame's learner is somebody else.
  // Trace A is a wrong way, not a row of the lesson's table.
  await expect(page.locator(".playground-progress >> nth=1")).toHaveAttribute("data-explored", "0");
  await expect(page.locator(".playground-progress >> nth=1")).toHaveAttribute("data-made", "0");
});

test("a run stepped through judges the prediction made before it", async ({ page }) => {
  await openHydrated(page, "/?lang=en");
  await predict(page, { ticket: "resolved", client: "unknown" });
  await page.getByRole("button", { name: text("en", "stepper.start") }).click();
  await expect(page.locator(".stepper")).toHaveAttribute("data-at", "after_begin");
  await page.locator('.stepper [data-cmd="next"]').click();
  await expect(page.locator(".stepper")).toHaveAttribute("data-at", "after_update");
  await expect(page.locator(".stepper")).toHaveAttribute("aria-busy", "false");
  await page.getByRole("button", { name: text("en", "stepper.crash") }).click();
  await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "crashed_after_update");
  const judged = page.locator("section.outcome .judgement");
  await expect(judged.locator('li[data-item="ticket"]')).toHaveAttribute("data-right", "false");
  await expect(judged.locator('li[data-item="client"]')).toHaveAttribute("data-right", "true");
  expect((await dbState(await sandboxOf(page))).tickets).toEqual([{ id: "ticket-42", status: "open" }]);
});

test("an unknown prediction is refused with a code and stores nothing", async ({ request }) => {
  const bad = await request.post("/api/attempt", { form: { crash: "after_update", predict_ticket: "closed" } });
  expect(bad.status()).toBe(422);
  expect((await bad.json()).code).toBe("unknown_prediction");
  const progress = await request.post("/api/progress", { form: {} });
  expect((await progress.json()).explored).toBe(0);
});
