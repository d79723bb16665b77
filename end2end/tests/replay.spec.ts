import AxeBuilder from "@axe-core/playwright";
import { expect, Page, test } from "@playwright/test";
import { attempt, LANGS, openPage, text } from "./helpers";

/** The replay's position: `data-step` of the "step k of n" line. */
async function position(page: Page): Promise<number> {
  return Number(await page.locator(".replay-at").getAttribute("data-step"));
}

/** The outbox rows of one of the replay's views (`replay-inside` or `replay-outside`). */
function outboxRows(page: Page, view: "replay-inside" | "replay-outside") {
  return page.locator(`section.${view} table[data-table="outbox"] tbody tr[data-id]`);
}

for (const lang of LANGS) {
  for (const javaScriptEnabled of [true, false]) {
    const js = javaScriptEnabled ? "on" : "off";
    test(`share a run and step through its replay (${lang}, JavaScript ${js})`, async ({ browser }) => {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await openPage(page, `/?lang=${lang}`, javaScriptEnabled);
      await attempt(page, { crash: "after_insert" }, "crashed_before_commit");

      // Sharing is a plain form: it keeps the run and goes to its replay.
      await page.getByRole("button", { name: text(lang, "share.button") }).click();
      await expect(page).toHaveURL(/\/replay\/[0-9a-f]{32}\?lang=/);
      const replayUrl = new URL(page.url());
      await expect(page.getByRole("heading", { name: text(lang, "replay.heading") })).toBeVisible();
      await expect(page.locator(".replay-at")).toHaveText(text(lang, "replay.at_start"));
      await expect(page.locator('[data-nav="back"]')).toHaveAttribute("aria-disabled", "true");
      const steps = Number(await page.locator(".replay-at").getAttribute("data-steps"));
      expect(steps).toBeGreaterThan(4);

      // One step forward: by the keyboard without a reload when scripts run, by the link
      // (its own URL) when they do not.
      if (javaScriptEnabled) {
        await page.evaluate(() => ((window as any).__stillHere = true));
        await page.keyboard.press("ArrowRight");
      } else {
        await page.locator('a[data-nav="forward"]').click();
      }
      await expect.poll(() => position(page)).toBe(1);
      await expect(page).toHaveURL(/step=1/);

      // To the INSERT, from the list of every step: the row is there inside, not outside.
      await page.locator("details.replay-steps summary").click();
      await page.locator("details.replay-steps a", { hasText: "INSERT INTO outbox" }).first().click();
      await expect(page.locator("section.replay-inside")).toBeVisible();
      await expect(outboxRows(page, "replay-inside")).toHaveCount(1);
      await expect(outboxRows(page, "replay-outside")).toHaveCount(0);
      await expect(page.locator("section.replay-inside h3")).toHaveText(text(lang, "replay.inside_heading"));
      const atInsert = await position(page);

      // And back.
      if (javaScriptEnabled) {
        await page.keyboard.press("ArrowLeft");
      } else {
        await page.locator('a[data-nav="back"]').click();
      }
      await expect.poll(() => position(page)).toBe(atInsert - 1);
      await expect(outboxRows(page, "replay-inside")).toHaveCount(0);

      // The end: the crash left nothing; the outcome is named.
      await page.locator('a[data-nav="last"]').click();
      await expect.poll(() => position(page)).toBe(steps);
      await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "crashed_before_commit");
      await expect(page.locator("section.replay-inside")).toHaveCount(0);
      if (javaScriptEnabled) {
        expect(await page.evaluate(() => (window as any).__stillHere)).toBe(true);
        const result = await new AxeBuilder({ page }).analyze();
        const found = result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
        expect(found, `${lang}, replay`).toEqual([]);
      }

      // An author's embed of the same run: the frame's layout, nothing run, steps stay in it.
      const id = replayUrl.pathname.split("/").pop();
      await openPage(page, `/embed?replay=${id}&lang=${lang}`, false);
      await expect(page.locator("[data-replay] .replay-at")).toHaveAttribute("data-step", "0");
      await page.locator('a[data-nav="forward"]').click();
      await expect(page).toHaveURL(/\/embed\?replay=.*step=1/);
      await expect.poll(() => position(page)).toBe(1);
      await context.close();
    });
  }
}
