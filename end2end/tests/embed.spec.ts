import { expect, test } from "@playwright/test";
import * as fs from "fs";
import * as path from "path";
import { expectPageMatchesDatabase, openHydrated, text } from "./helpers";

/** A course site on another origin; the test command lets it frame the playground
 *  (PLAYGROUND_FRAME_ANCESTORS). The page itself is the shipped fixture. */
const COURSE = "http://localhost:4321";
const STRANGER = "http://stranger.localhost:4322";
const FIXTURE = fs.readFileSync(path.join(__dirname, "..", "fixtures", "course-page.html"), "utf8");

test("a course page on another site embeds two playgrounds, each with its own sandbox", async ({
  page,
  baseURL,
}) => {
  await page.route(`${COURSE}/**`, (r) =>
    r.fulfill({ contentType: "text/html; charset=utf-8", body: FIXTURE }),
  );
  await page.goto(`${COURSE}/course-page.html?playground=${encodeURIComponent(baseURL!)}`);
  const frames = page.locator("iframe.playground");
  await expect(frames).toHaveCount(2);
  const first = page.frameLocator("iframe.playground >> nth=0");
  const second = page.frameLocator("iframe.playground >> nth=1");

  // Each ran its preset attempt on load.
  await expect(first.locator("section.outcome")).toHaveAttribute("data-outcome", "committed_then_crashed");
  await expect(second.locator("section.outcome")).toHaveAttribute("data-outcome", "naive_event_lost");
  await expect(first.locator("header.page-header")).toHaveCount(0);
  const sandbox = (f: typeof first) => f.locator("section.tables [data-sandbox]").innerText();
  expect(await sandbox(first)).not.toBe(await sandbox(second));

  // Third-party frames get no cookies here; the sandbox lives in the frame's own URL.
  const cookies = await page.context().cookies(baseURL!);
  expect(cookies.filter((c) => c.name === "sandbox")).toEqual([]);
  await expect(first.locator("html")).toHaveAttribute("data-hydrated", "true");
  await first.getByRole("button", { name: text("ru", "controls.reset"), exact: true }).click();
  await expect(first.locator("section.outcome")).toHaveAttribute("data-action", "reset");
  await expect(second.locator("section.outcome")).toHaveAttribute("data-outcome", "naive_event_lost");

  // The frames were sized to their content: no scrolling inside them.
  for (const [i, frame] of [first, second].entries()) {
    await expect
      .poll(async () => {
        const content = await frame
          .locator("html")
          .evaluate((e) => Math.ceil(e.getBoundingClientRect().height));
        const box = await frames.nth(i).evaluate((e) => (e as HTMLElement).clientHeight);
        return box - content;
      })
      .toBeGreaterThanOrEqual(-2);
  }
});

test("a site that is not configured cannot frame the playground", async ({ page, baseURL }) => {
  const answer = await page.request.get(`${baseURL}/embed?s=${"0".repeat(64)}`);
  // The test command also lets its LTI test platform frame the playground.
  const allowed = [COURSE, process.env.LTI_PLATFORM_URL].filter(Boolean).join(" ");
  expect(answer.headers()["content-security-policy"]).toBe(`frame-ancestors 'self' ${allowed}`);
  await page.route(`${STRANGER}/**`, (r) =>
    r.fulfill({
      contentType: "text/html; charset=utf-8",
      body: `<!doctype html><title>x</title><iframe src="${baseURL}/embed" onload="document.body.dataset.loaded=1"></iframe>`,
    }),
  );
  await page.goto(`${STRANGER}/page.html`);
  await expect(page.locator("body")).toHaveAttribute("data-loaded", "1");
  await expect(page.frameLocator("iframe").locator("main")).toHaveCount(0);
});

test("the embed fits a 320 px frame without horizontal scrolling", async ({ page }) => {
  await page.setViewportSize({ width: 320, height: 800 });
  await openHydrated(page, "/embed?crash=after_insert&autorun=1&lang=en");
  await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "crashed_before_commit");
  const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  expect(fits).toBe(true);
});

test("a link presets the controls, autorun runs it, and the link can be copied", async ({ page, context }) => {
  await openHydrated(page, "/?mode=outbox&mistakes=insert_outside_tx&crash=after_insert&lang=en");
  await expect(page.locator('input[name="crash"][value="after_insert"]')).toBeChecked();
  await expect(page.locator('select[name="mistakes"]')).toHaveValue("insert_outside_tx");
  await expect(page.locator("#permalink")).toHaveValue(
    /^http:\/\/[^/]+\/\?mode=outbox&mistakes=insert_outside_tx&crash=after_insert&lang=en$/,
  );

  await openHydrated(page, "/?mode=naive&crash=after_commit&autorun=1&lang=en");
  await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "naive_event_lost");
  await expect(page.locator('input[name="mode"][value="naive"]')).toBeChecked();

  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.locator('#attempt-form input[name="crash"][value="none"]').check();
  // The link is folded under its own summary, out of the way of the attempt.
  await page.locator("details.permalink > summary").click();
  await page.getByRole("button", { name: text("en", "controls.copy_link"), exact: true }).click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toMatch(/\?mode=naive&crash=none&lang=en$/);

  // An action returns to the page without the link's presets: autorun does not run again.
  await page.getByRole("button", { name: text("en", "controls.reset"), exact: true }).click();
  await expect(page.locator("section.outcome")).toHaveAttribute("data-action", "reset");
  expect((await expectPageMatchesDatabase(page)).outbox).toEqual([]);
});

test("site files are compressed and the hashed ones cached for a year", async ({ page, baseURL }) => {
  const html = await page.request.get(`${baseURL}/?lang=en`, { headers: { "accept-encoding": "br, gzip" } });
  expect(html.headers()["content-encoding"]).toMatch(/br|gzip/);
  expect(html.headers()["cache-control"]).toBe("no-cache");
  const body = await html.text();
  const files = [...body.matchAll(/\/pkg\/[^"' ]+\.(?:wasm|js|css)/g)].map((m) => m[0]);
  expect(files.length).toBeGreaterThanOrEqual(2);
  for (const file of new Set(files)) {
    expect(file).toMatch(/\.[A-Za-z0-9_-]{16,}\.(wasm|js|css)$/);
    const answer = await page.request.get(`${baseURL}${file}`, { headers: { "accept-encoding": "br, gzip" } });
    expect(answer.status(), file).toBe(200);
    expect(answer.headers()["cache-control"], file).toBe("public, max-age=31536000, immutable");
  }
});
