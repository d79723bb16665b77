import { expect, Page } from "@playwright/test";
import { test } from "@playwright/test";
import { LANGS, openHydrated, openPage, press, text } from "./helpers";

/** A box as the browser lays it out, in page coordinates (not the viewport's). */
async function pageBox(page: Page, selector: string) {
  const box = await page.locator(selector).first().boundingBox();
  expect(box, `${selector} has a box`).not.toBeNull();
  const scrollY = await page.evaluate(() => window.scrollY);
  return { top: box!.y + scrollY, bottom: box!.y + box!.height + scrollY, viewportTop: box!.y, height: box!.height };
}

/** Chooses a crash mark on the strip the way a learner does: a click on its drawn mark. */
async function chooseMark(page: Page, crash: string) {
  await page.locator(`.strip label.mark[data-mark="${crash}"]`).click();
  await expect(page.locator(`#attempt-form input[name="crash"][value="${crash}"]`)).toBeChecked();
}

for (const lang of LANGS) {
  test.describe(`the timeline (${lang})`, () => {
    test("at 1280×800 the result of an attempt is in view next to its cause, and the page is short", async ({ page }) => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await openHydrated(page, `/?lang=${lang}`);
      await chooseMark(page, "after_commit");
      await page.locator("#attempt-form button[type=submit]").click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "committed_then_crashed");

      for (const region of ["section.outcome", 'table[data-table="tickets"]', 'table[data-table="outbox"]']) {
        const box = (await page.locator(region).first().boundingBox())!;
        expect(box.y, `${region} starts in the viewport`).toBeGreaterThanOrEqual(0);
        expect(box.y + box.height, `${region} ends in the viewport`).toBeLessThanOrEqual(800);
      }
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      expect(height).toBeLessThanOrEqual(2000);

      // The strip shows where the run ended: every step up to COMMIT ran, the process died after it.
      const strip = page.locator("ol.strip");
      await expect(strip).toHaveAttribute("data-trail", "shown");
      await expect(strip).toHaveAttribute("data-reached-steps", "begin update insert commit");
      const died = page.locator('.slot[data-crash="after_commit"][data-died="true"] .died-note');
      await expect(died).toBeVisible();
      await expect(died).toHaveText(text(lang, "strip.died"));
    });

    test("at 360×800 the outcome is within one screen below the pressed button", async ({ page }) => {
      await page.setViewportSize({ width: 360, height: 800 });
      await openHydrated(page, `/?lang=${lang}`);
      await chooseMark(page, "after_insert");
      const button = await pageBox(page, "#attempt-form button[type=submit]");
      await page.locator("#attempt-form button[type=submit]").click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "crashed_before_commit");
      const outcome = await pageBox(page, "section.outcome");
      expect(outcome.top - button.top).toBeGreaterThanOrEqual(0);
      expect(outcome.top - button.top).toBeLessThanOrEqual(800);
      // The strip runs downwards here: each step below the one before.
      const update = await pageBox(page, '.slot[data-step="update"]');
      const insert = await pageBox(page, '.slot[data-step="insert"]');
      expect(insert.top).toBeGreaterThanOrEqual(update.bottom);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(360);
    });
  });
}

test("the crash marks are a radio group: reachable, movable and announced by the keyboard", async ({ page }) => {
  await openHydrated(page, "/?lang=en");
  const afterUpdate = page.getByRole("radio", { name: new RegExp(text("en", "crash.after_update.label")) });
  await afterUpdate.focus();
  await page.keyboard.press("Space");
  await expect(afterUpdate).toBeChecked();
  await page.keyboard.press("ArrowRight");
  // The next mark of the outbox function is the gap after the INSERT.
  await expect(page.locator('input[name="crash"][value="after_insert"]')).toBeChecked();
  await expect(page.locator('input[name="crash"][value="after_insert"]')).toBeFocused();
  // The line under the strip says what the chosen mark means.
  await expect(page.locator('.strip-line[data-for="after_insert"]')).toBeVisible();
  await expect(page.locator('.strip-line[data-for="after_update"]')).toBeHidden();
});

for (const javaScriptEnabled of [true, false]) {
  test(`every crash mark, once chosen, shows its own line under the strip (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async ({ browser }) => {
    const context = await browser.newContext({ javaScriptEnabled });
    const page = await context.newPage();
    await openPage(page, "/?lang=ru", javaScriptEnabled);
    const marks = await page.locator('.strip label.mark input[name="crash"]').evaluateAll((els) =>
      els.filter((e) => (e.closest("li") as HTMLElement).offsetParent !== null).map((e) => (e as HTMLInputElement).value),
    );
    // The outbox function's marks include the one right after BEGIN, whose line was once missing.
    expect(marks).toContain("after_begin");
    for (const crash of marks) {
      await page.locator(`.strip label.mark[data-mark="${crash}"]`).click();
      await expect(page.locator(`.strip-line[data-for="${crash}"]`)).toBeVisible();
      await expect(page.locator(".strip-line:visible")).toHaveCount(1);
    }
    await context.close();
  });
}

test("each mode draws its own function, and a mistake redraws its step", async ({ page }) => {
  await openHydrated(page, "/?lang=en");
  const visibleSteps = () =>
    page.locator("ol.strip > li.step").evaluateAll((els) =>
      els.filter((e) => (e as HTMLElement).offsetParent !== null).map((e) => e.getAttribute("data-step")),
    );
  expect(await visibleSteps()).toEqual(["begin", "update", "insert", "commit"]);
  await page.locator('input[name="mode"][value="naive"]').check();
  expect(await visibleSteps()).toEqual(["begin", "update", "commit", "publish"]);
  await page.locator('input[name="mode"][value="naive_publish_first"]').check();
  expect(await visibleSteps()).toEqual(["begin", "update", "publish", "commit"]);
  await expect(page.locator('.slot[data-step="publish"][data-in="naive_publish_first"] .outside')).toBeVisible();

  await page.locator('input[name="mode"][value="outbox"]').check();
  const viaPool = page.locator('.slot[data-step="insert"] .via-pool');
  await expect(viaPool).toBeHidden();
  await page.locator('select[name="mistakes"]').selectOption("insert_outside_tx");
  await expect(viaPool).toBeVisible();
  await expect(viaPool).toHaveText(text("en", "strip.via_pool"));
  await page.locator('select[name="mistakes"]').selectOption("on_conflict_do_nothing");
  await expect(viaPool).toBeHidden();
  await expect(page.locator('.slot[data-step="insert"] .on-conflict')).toBeVisible();
});

test("every crash point of every mode, chosen on the strip, gives the API's outcome for the same fields", async ({
  page,
  playwright,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const cases: [string, string, string?][] = [
    ["outbox", "none"],
    ["outbox", "after_begin"],
    ["outbox", "after_update"],
    ["outbox", "after_insert"],
    ["outbox", "after_commit"],
    ["outbox", "commit_reply_lost", "applied"],
    ["outbox", "commit_reply_lost", "not_applied"],
    ["naive", "none"],
    ["naive", "after_begin"],
    ["naive", "after_update"],
    ["naive", "after_commit"],
    ["naive_publish_first", "none"],
    ["naive_publish_first", "after_begin"],
    ["naive_publish_first", "after_update"],
    ["naive_publish_first", "after_publish"],
    ["naive_publish_first", "after_commit"],
  ];
  await openHydrated(page, "/?lang=en");
  for (const [mode, crash, fate] of cases) {
    const form: Record<string, string> = { mode, crash };
    if (fate) form.commit_fate = fate;
    // The API call runs in a sandbox of its own, from the lesson's initial state.
    const fresh = await playwright.request.newContext({ baseURL });
    const res = await fresh.post("/api/attempt", { form });
    expect(res.status()).toBe(200);
    const expected = (await res.json()).outcome;
    await fresh.dispose();

    await press(page, "en", "reset");
    await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
    await page.locator(`input[name="mode"][value="${mode}"]`).check();
    await chooseMark(page, crash);
    if (fate) await page.locator(`input[name="commit_fate"][value="${fate}"]`).check();
    await page.locator("#attempt-form button[type=submit]").click();
    await expect(page.locator("section.outcome"), `${mode} ${crash}`).toHaveAttribute("data-outcome", expected);
    await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "attempt");
  }
});
