import AxeBuilder from "@axe-core/playwright";
import { expect, Page, test } from "@playwright/test";
import { attempt, LANGS, openPage, text } from "./helpers";

const QUEST = "commit_not_kafka";
const COURSE = "http://localhost:4321";

async function axeClean(page: Page, what: string) {
  const result = await new AxeBuilder({ page }).analyze();
  const found = result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(found, what).toEqual([]);
}

/** The checks of the quest's panel, by what they say: held or not. */
async function checks(page: Page): Promise<Record<string, string | null>> {
  const items = page.locator(`section.quest[data-quest="${QUEST}"] .quest-checks li`);
  const out: Record<string, string | null> = {};
  for (const li of await items.all()) {
    const says = (await li.innerText()).replace(/^[✓✗·]\s*/, "").split(" — ")[0].trim();
    out[says] = await li.getAttribute("data-held");
  }
  return out;
}

for (const lang of LANGS) {
  for (const javaScriptEnabled of [true, false]) {
    const js = javaScriptEnabled ? "on" : "off";
    test(`a quest: fail it, take a hint, reach it, answer wrong then right (${lang}, JavaScript ${js})`, async ({
      browser,
    }) => {
      const context = await browser.newContext({ javaScriptEnabled, viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();

      // The list, from the header's link.
      await openPage(page, `/?lang=${lang}`, javaScriptEnabled);
      await page.getByRole("link", { name: text(lang, "quest.nav"), exact: true }).click();
      await expect(page).toHaveURL(/\/quests/);
      const item = page.locator(`.quest-list li[data-quest="${QUEST}"]`);
      await expect(item).toHaveAttribute("data-reached", "false");
      await expect(item.locator(".quest-status")).toHaveText(text(lang, "quest.status_not_yet"));
      if (javaScriptEnabled) await axeClean(page, `${lang}, quest list`);
      await item.getByRole("link", { name: text(lang, "quest.take") }).click();
      await expect(page).toHaveURL(new RegExp(`quest=${QUEST}`));
      const goal = page.locator(".quest-goal");
      await expect(goal).toHaveCount(1);
      await expect(goal).toHaveAttribute("data-reached", "false");

      // Fail once: a crash before COMMIT leaves nothing; the checks say which do not hold.
      await attempt(page, { crash: "after_insert" }, "crashed_before_commit");
      const failed = await checks(page);
      expect(Object.values(failed)).toContain("false");
      expect(Object.values(failed)).not.toContain(null);
      await expect(goal).toHaveAttribute("data-reached", "false");

      // A hint, one at a time.
      await page.getByRole("button", { name: text(lang, "quest.hint"), exact: true }).click();
      await expect(page.locator(`section.quest .quest-hints li`)).toHaveCount(1);

      // Reach it: COMMIT answered, then the process died before anything was published.
      await attempt(page, { crash: "after_commit" }, "committed_then_crashed");
      await expect(goal).toHaveAttribute("data-reached", "true");
      expect(Object.values(await checks(page)).every((h) => h === "true")).toBe(true);

      // The goal stays in view while the learner works further down the page.
      await page.locator("#failures-heading").scrollIntoViewIfNeeded();
      const box = await goal.boundingBox();
      const viewport = page.viewportSize()!;
      expect(box).not.toBeNull();
      expect(box!.y).toBeGreaterThanOrEqual(-1);
      expect(box!.y + box!.height).toBeLessThanOrEqual(viewport.height);
      expect(box!.height).toBeLessThan(viewport.height / 4);

      // The question: wrong, then right.
      const form = page.locator("form.quest-question");
      await form.locator('input[value="delivered"]').check();
      await form.getByRole("button", { name: text(lang, "quest.answer") }).click();
      await expect(page.locator(".quest-verdict")).toHaveAttribute("data-right", "false");
      await expect(page.locator(".quest-verdict")).toContainText(text(lang, "quest.wrong"));
      await expect(page.locator(".quest-explained")).toHaveCount(0);
      await page.locator('form.quest-question input[value="durable_intent"]').check();
      await page.locator("form.quest-question button[type=submit]").click();
      await expect(page.locator(".quest-verdict")).toHaveAttribute("data-right", "true");
      await expect(page.locator(".quest-explained")).toBeVisible();
      if (javaScriptEnabled) await axeClean(page, `${lang}, playground with a quest`);

      // The list says so (a page of plain HTML: nothing on it hydrates).
      await page.goto(`/quests?lang=${lang}`);
      await expect(item.locator(".quest-status")).toContainText(text(lang, "quest.status_explained"));
      await context.close();
    });
  }
}

test("the embed with quest= shows that goal only and tells its course page", async ({ page, baseURL }) => {
  const host = `<!doctype html><html lang="en"><title>course</title><body>
    <iframe title="playground" src="${baseURL}/embed?quest=${QUEST}&lang=en" style="width:100%;height:2400px"></iframe>
    <script>
      window.addEventListener("message", function (e) {
        if (e.data && e.data.type === "outbox-playground:progress")
          document.body.dataset.quests = JSON.stringify(e.data.quests);
      });
    </script></body></html>`;
  await page.route(`${COURSE}/**`, (r) => r.fulfill({ contentType: "text/html; charset=utf-8", body: host }));
  await page.goto(`${COURSE}/lesson.html`);
  const frame = page.frameLocator("iframe");
  await expect(frame.locator(".quest-goal")).toHaveCount(1);
  await expect(frame.locator(".quest-goal")).toHaveAttribute("data-quest", QUEST);
  await expect
    .poll(async () => JSON.parse((await page.locator("body").getAttribute("data-quests")) ?? "[]"))
    .toEqual([{ id: QUEST, reached: false, explained: null, hints_used: 0 }]);
  await frame.locator("html[data-hydrated=true]").waitFor();
  await frame.locator('#attempt-form input[name="crash"][value="after_commit"]').check();
  // The embed predicts first; a prediction is not needed to run.
  await frame.locator("#attempt-form button[type=submit]").click();
  await expect(frame.locator("section.outcome")).toHaveAttribute("data-outcome", "committed_then_crashed");
  await expect
    .poll(async () => JSON.parse((await page.locator("body").getAttribute("data-quests")) ?? "[]")[0]?.reached)
    .toBe(true);
});

test("the author's page: refused without the token, the class's counts with it", async ({ page, request }) => {
  const token = process.env.AUTHOR_TOKEN;
  expect(token, "the test command sets AUTHOR_TOKEN").toBeTruthy();
  await page.goto("/author?lang=en");
  await expect(page.locator("h1")).toHaveText(text("en", "author.title"));
  await expect(page.locator('input[name="token"]')).toBeVisible();
  await expect(page.locator("table.author-table")).toHaveCount(0);
  await axeClean(page, "author, asking for the token");
  await page.locator('input[name="token"]').fill("not-the-token-of-this-server");
  await page.getByRole("button", { name: text("en", "author.open") }).click();
  await expect(page.locator(".error")).toHaveAttribute("data-code", "author_token_wrong");

  await page.locator('input[name="token"]').fill(token!);
  await page.getByRole("button", { name: text("en", "author.open") }).click();
  await expect(page.locator("table.author-table")).toHaveCount(2);
  await expect(page.locator(`tr[data-quest="${QUEST}"]`)).toHaveCount(1);
  await axeClean(page, "author, counts");
  const csv = await request.get(`/author.csv?token=${encodeURIComponent(token!)}`);
  expect(csv.status()).toBe(200);
  expect(await csv.text()).toContain(`quest,${QUEST},`);
  expect((await request.get("/author.csv?token=wrong")).status()).toBe(403);
});
