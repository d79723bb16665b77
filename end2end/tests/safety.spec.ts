import { expect, test } from "@playwright/test";
import * as fs from "fs";
import * as path from "path";
import { attempt, dbState, openHydrated, sandboxOf, text } from "./helpers";

/** A site that is not the playground: its pages post forms at the playground. */
const STRANGER = "http://stranger.localhost:4322";
const COURSE = "http://localhost:4321";
const FIXTURE = fs.readFileSync(path.join(__dirname, "..", "fixtures", "course-page.html"), "utf8");

test("a page of another site cannot act on a learner's sandbox or replace it", async ({ page, context, baseURL }) => {
  await openHydrated(page, "/?lang=en");
  await attempt(page, { crash: "none" }, "committed");
  const schema = await sandboxOf(page);
  const cookieBefore = (await context.cookies(baseURL!)).find((c) => c.name === "sandbox")?.value;
  expect(cookieBefore).toBeTruthy();
  const tablesBefore = await dbState(schema);

  for (const action of ["reset", "reopen", "attempt", "reconcile", "race", "compare"]) {
    // The other site's page posts a form at the playground as soon as it loads.
    await page.route(`${STRANGER}/**`, (r) =>
      r.fulfill({
        contentType: "text/html; charset=utf-8",
        body: `<!doctype html><title>x</title>
          <form method="post" action="${baseURL}/api/${action}"><input name="crash" value="after_commit"></form>
          <script>document.forms[0].submit()</script>`,
      }),
    );
    const answer = page.waitForResponse((r) => r.url().startsWith(`${baseURL}/api/${action}`));
    await page.goto(`${STRANGER}/${action}.html`);
    const res = await answer;
    expect(res.status(), action).toBe(403);
    await expect(page.locator('[data-code="cross_site"]')).toBeVisible();
    await page.unroute(`${STRANGER}/**`);
    const cookieNow = (await context.cookies(baseURL!)).find((c) => c.name === "sandbox")?.value;
    expect(cookieNow, action).toBe(cookieBefore);
    expect(await dbState(schema), action).toEqual(tablesBefore);
  }

  // The refusal's page leads back to the playground, where the learner's work is as it was.
  await page.locator('[data-code="cross_site"] ~ p a').click();
  await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "committed");
  expect(await sandboxOf(page)).toBe(schema);
});

test("tools that send no browser headers still act", async ({ playwright, baseURL }) => {
  const api = await playwright.request.newContext({ baseURL });
  const res = await api.post("/api/attempt", { form: { crash: "after_update" } });
  expect(res.status()).toBe(200);
  expect((await res.json()).outcome).toBe("crashed_after_update");
  await api.dispose();
});

for (const javaScriptEnabled of [true, false]) {
  test(`an embed keeps its own sandbox when the browser sends no Referer (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async ({
    browser,
    baseURL,
  }) => {
    const context = await browser.newContext({ javaScriptEnabled });
    const page = await context.newPage();
    // A privacy setting that strips the Referer from every request the frames make.
    await page.route(`${baseURL}/**`, (r) => {
      const headers = { ...r.request().headers() };
      delete headers["referer"];
      return r.continue({ headers });
    });
    // The fixture points its frames at the playground with a script; without JavaScript the
    // course page itself must carry their addresses.
    const course = javaScriptEnabled
      ? FIXTURE
      : FIXTURE.replace(/data-query="([^"]*)"/g, (_, q) => `src="${baseURL}/embed?${q}" data-query="${q}"`);
    await page.route(`${COURSE}/**`, (r) => r.fulfill({ contentType: "text/html; charset=utf-8", body: course }));
    await page.goto(`${COURSE}/course-page.html?playground=${encodeURIComponent(baseURL!)}`);
    const first = page.frameLocator("iframe.playground >> nth=0");
    const second = page.frameLocator("iframe.playground >> nth=1");
    await expect(first.locator("section.outcome")).toHaveAttribute("data-outcome", "committed_then_crashed");
    await expect(second.locator("section.outcome")).toHaveAttribute("data-outcome", "naive_event_lost");
    const schema = (await first.locator("[data-sandbox]").getAttribute("data-sandbox"))!;
    if (javaScriptEnabled) await expect(first.locator("html")).toHaveAttribute("data-hydrated", "true");
    await first.getByRole("button", { name: text("ru", "controls.reopen"), exact: true }).click();
    await expect(first.locator("section.outcome")).toHaveAttribute("data-action", "reopen");
    // Still the frame's own sandbox (not a cookie one, not the other frame's), in Russian.
    await expect(first.locator("[data-sandbox]")).toHaveAttribute("data-sandbox", schema);
    await expect(first.locator("html")).toHaveAttribute("lang", "ru");
    expect((await dbState(schema)).tickets).toEqual([{ id: "ticket-42", status: "open" }]);
    expect((await dbState(schema)).outbox.map((r) => r.event_id)).toEqual(["event-ticket-900"]);
    await expect(second.locator("section.outcome")).toHaveAttribute("data-outcome", "naive_event_lost");
    expect((await context.cookies(baseURL!)).filter((c) => c.name === "sandbox")).toEqual([]);
    await context.close();
  });
}
