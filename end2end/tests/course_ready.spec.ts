import AxeBuilder from "@axe-core/playwright";
import { expect, Page, test } from "@playwright/test";
import * as fs from "fs";
import * as path from "path";
import { expectPageMatchesDatabase, LANGS, openHydrated, text, openCompare } from "./helpers";

/** Where the layout screenshots are kept for people to look at (outside Playwright's own
 *  output folder, which it empties on every run). */
const SHOTS = path.join(__dirname, "..", "artefacts", "layout");

test.describe("JavaScript off", () => {
  test.use({ javaScriptEnabled: false });

  /** Posts the attempt form the way a browser without JavaScript does, and waits for the page. */
  async function attemptNoJs(page: Page, crash: string, opts: { fate?: string; payload?: string } = {}) {
    await page.locator(`#attempt-form input[name="crash"][value="${crash}"]`).check();
    if (opts.fate) await page.locator(`input[name="commit_fate"][value="${opts.fate}"]`).check();
    if (opts.payload !== undefined) {
      await page.locator("details.event summary").click();
      await page.locator('textarea[name="payload"]').fill(opts.payload);
    }
    await Promise.all([page.waitForNavigation(), page.locator("#attempt-form button[type=submit]").click()]);
  }

  async function pressNoJs(page: Page, action: "reconcile" | "reopen" | "reset") {
    const button = page.getByRole("button", { name: text("ru", `controls.${action}`), exact: true });
    await Promise.all([page.waitForNavigation(), button.click()]);
  }

  async function expectOutcome(page: Page, outcome: string, status: string, outbox: string[]) {
    const section = page.locator("section.outcome");
    await expect(section).toHaveAttribute("data-outcome", outcome);
    await expect(section.locator(".outcome-title")).toContainText(text("ru", `outcome.${outcome}.title`));
    const db = await expectPageMatchesDatabase(page);
    expect(db.tickets).toEqual([{ id: "ticket-42", status }]);
    expect(db.outbox.map((r) => r.event_id)).toEqual(outbox);
  }

  test("every row of the failure table works with plain form posts", async ({ page }) => {
    // The language is pinned: this test is about forms without JavaScript.
    await page.goto("/?lang=ru");
    await expect(page.locator("html")).not.toHaveAttribute("data-hydrated", "true");
    await attemptNoJs(page, "after_update");
    await expectOutcome(page, "crashed_after_update", "open", []);
    await attemptNoJs(page, "after_insert");
    await expectOutcome(page, "crashed_before_commit", "open", []);
    await attemptNoJs(page, "after_insert", { payload: "{oops" });
    await expectOutcome(page, "invalid_payload", "open", []);
    // An empty field counts as absent: the lesson's payload again.
    await attemptNoJs(page, "after_commit", { payload: "" });
    await expectOutcome(page, "committed_then_crashed", "resolved", ["event-ticket-900"]);
    await attemptNoJs(page, "none");
    await expectOutcome(page, "guard_rejected", "resolved", ["event-ticket-900"]);
    await pressNoJs(page, "reopen");
    await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reopen");
    await attemptNoJs(page, "none");
    await expectOutcome(page, "insert_conflict", "open", ["event-ticket-900"]);
    await pressNoJs(page, "reset");
    await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
    await attemptNoJs(page, "commit_reply_lost", { fate: "applied" });
    await expectOutcome(page, "commit_unknown", "resolved", ["event-ticket-900"]);
    await pressNoJs(page, "reconcile");
    await expectOutcome(page, "reconciled_committed", "resolved", ["event-ticket-900"]);
    await pressNoJs(page, "reset");
    await attemptNoJs(page, "none");
    await expectOutcome(page, "committed", "resolved", ["event-ticket-900"]);
  });

  test("a refused value comes back as a message in the page", async ({ page }) => {
    await page.goto("/?lang=en");
    // Without the script nothing unticks a mark the new mode lacks: the strip only hides it.
    await page.locator('input[name="crash"][value="after_insert"]').check();
    await page.locator('input[name="mode"][value="naive"]').check();
    await expect(page.locator('input[name="crash"][value="after_insert"]')).toBeHidden();
    await Promise.all([page.waitForNavigation(), page.locator("#attempt-form button[type=submit]").click()]);
    await expect(page.locator("section.outcome .error")).toHaveAttribute("data-code", "crash_point_not_in_mode");
  });

  test("after an action, a link's autorun does not run again", async ({ page }) => {
    await page.goto("/?crash=after_commit&autorun=1&lang=ru");
    await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "committed_then_crashed");
    await pressNoJs(page, "reset");
    // Back on the page without the link's presets: the reset stands.
    await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
    expect(new URL(page.url()).search).toBe("?lang=ru");
    const db = await expectPageMatchesDatabase(page);
    expect(db.outbox).toEqual([]);
  });

  test("the race and the comparison work with plain form posts", async ({ page }) => {
    await page.goto("/?lang=en");
    const race = page.getByRole("button", { name: text("en", "controls.race"), exact: true });
    await Promise.all([page.waitForNavigation(), race.click()]);
    await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "race_one_winner");
    await expect(page.locator("ol.trace.lanes")).toBeVisible();
    await openCompare(page);
    const form = page.locator("#compare-form");
    await form.locator('select[name="way"]').selectOption("insert_outside_tx");
    await form.locator('select[name="crash"]').selectOption("after_insert");
    await Promise.all([page.waitForNavigation(), form.locator("button[type=submit]").click()]);
    await expect(page.locator("section.compare .difference")).toHaveAttribute(
      "data-difference",
      "intent_without_status",
    );
  });
});

test("with JavaScript an action updates the page in place, and the new controls are live", async ({ page }) => {
  // Narrow, so the form's button is well below the top of the page.
  await page.setViewportSize({ width: 360, height: 640 });
  await openHydrated(page, "/?lang=en");
  // Marks that a new document (a reload) or a new live region would not carry.
  await page.evaluate(() => {
    (window as any).samePage = true;
    (document.querySelector("section.outcome [aria-live]") as any).sameRegion = true;
  });
  await page.locator('input[name="crash"][value="after_commit"]').check();
  const submit = page.locator("#attempt-form button[type=submit]");
  await submit.focus();
  const scrolled = await page.evaluate(() => window.scrollY);
  expect(scrolled).toBeGreaterThan(0);
  await page.keyboard.press("Enter");
  await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "committed_then_crashed");
  await expectPageMatchesDatabase(page);
  expect(await page.evaluate(() => (window as any).samePage)).toBe(true);
  const region = await page.evaluate(
    () => (document.querySelector("section.outcome [aria-live]") as any).sameRegion,
  );
  expect(region).toBe(true);
  expect(await page.evaluate(() => window.scrollY)).toBe(scrolled);
  await expect(submit).toBeFocused();
  await expect(submit).toBeEnabled();
  await expect(submit).toHaveText(text("en", "controls.submit"));

  // The form keeps the learner's choice, and the controls the server sent again react.
  await expect(page.locator('input[name="crash"][value="after_commit"]')).toBeChecked();
  await page.locator('input[name="mode"][value="naive"]').check();
  await expect(page.locator('input[name="crash"][value="after_insert"]')).toBeDisabled();
  await expect(page.locator("#permalink")).toHaveValue(/\?mode=naive&crash=after_commit&lang=en$/);
});

for (const [lang, where] of LANGS.flatMap((l) => [[l, "/"], [l, "/embed"]] as const)) {
  test(`no accessibility violations before and after an attempt (${lang}, ${where})`, async ({ page }) => {
    await openHydrated(page, `${where}?lang=${lang}`);
    const scan = async (when: string) => {
      const result = await new AxeBuilder({ page }).analyze();
      const found = result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
      expect(found, `${lang}, ${where}, ${when}`).toEqual([]);
    };
    await scan("on load");
    await page.locator('input[name="crash"][value="after_insert"]').check();
    await page.locator("#attempt-form button[type=submit]").click();
    await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "crashed_before_commit");
    await scan("after an attempt");
    await page.getByRole("button", { name: text(lang, "controls.race"), exact: true }).click();
    await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "race_one_winner");
    await openCompare(page);
    const form = page.locator("#compare-form");
    await form.locator('select[name="crash"]').selectOption("after_commit");
    await form.locator("button[type=submit]").click();
    await expect(page.locator("section.compare .difference")).toBeVisible();
    await scan("after a race and a comparison");
  });
}

for (const width of [360, 768, 1280]) {
  test(`the layout fits ${width} px without horizontal scrolling`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    await openHydrated(page, "/?lang=ru");
    await page.getByRole("button", { name: text("ru", "controls.race"), exact: true }).click();
    await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "race_one_winner");
    await openCompare(page);
    const form = page.locator("#compare-form");
    await form.locator('select[name="crash"]').selectOption("after_commit");
    await form.locator("button[type=submit]").click();
    await expect(page.locator("section.compare .difference")).toBeVisible();
    const overflow = await page.evaluate(() => {
      const wide = [...document.querySelectorAll("body *")]
        .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
        .slice(0, 5)
        .map((e) => `${e.tagName.toLowerCase()}.${e.className}`);
      return { scroll: document.documentElement.scrollWidth, inner: window.innerWidth, wide };
    });
    expect(overflow.scroll, JSON.stringify(overflow.wide)).toBeLessThanOrEqual(overflow.inner);
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, `playground-${width}.png`), fullPage: true });
  });
}
