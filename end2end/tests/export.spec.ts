import { Download, expect, Locator, Page, test } from "@playwright/test";
import * as fs from "fs";
import { LANGS, Lang, attempt, openHydrated, text } from "./helpers";

/** Clicks a download link; answers the file's suggested name and its lines. */
async function downloaded(page: Page, link: Locator): Promise<{ name: string; lines: string[] }> {
  const [download]: [Download, void] = await Promise.all([page.waitForEvent("download"), link.click()]);
  const file = await download.path();
  return { name: download.suggestedFilename(), lines: fs.readFileSync(file, "utf8").split("\n") };
}

const FIRST_LINE =
  "-- Outbox playground, lesson 8.2: a run (attempt) as psql scripts, for PostgreSQL 13 or later.";

function downloadLink(page: Page, lang: Lang, name = text(lang, "export.download")): Locator {
  return page.locator(".download").getByRole("link", { name, exact: true });
}

for (const lang of LANGS) {
  test.describe(`download as psql (${lang})`, () => {
    test("an attempt downloads as a psql script that kills at its crash", async ({ page }) => {
      await openHydrated(page, `/?lang=${lang}`);
      // Nothing ran yet in this browser: nothing to download.
      await expect(page.locator(".download")).toHaveCount(0);
      await attempt(page, { crash: "after_insert" }, "crashed_before_commit");
      const file = await downloaded(page, downloadLink(page, lang));
      expect(file.name).toBe("outbox-ticket-42-after_insert-session-a.sql");
      expect(file.lines[0]).toBe(FIRST_LINE);
      expect(file.lines[1]).toBe("-- The run used one session: this file is the whole replay.");
      expect(file.lines).toContain("SET standard_conforming_strings = on;");
      expect(file.lines).toContain("SET search_path TO outbox_playground_run;");
      expect(file.lines).toContain(
        "UPDATE tickets SET status = 'resolved' WHERE id = 'ticket-42' AND status = 'open';",
      );
      expect(file.lines.some((l) => l.endsWith("(session A): kill this psql now"))).toBe(true);
      // A one-session run offers no second script.
      await expect(page.locator('.download a[data-export-session="b"]')).toHaveCount(0);
    });

    test("a race downloads one script per session", async ({ page }) => {
      await openHydrated(page, `/?lang=${lang}`);
      await page.getByRole("button", { name: text(lang, "controls.race"), exact: true }).click();
      await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "race_one_winner");
      const b = page.locator('.download a[data-export-session="b"]');
      await expect(b).toHaveText(text(lang, "export.session").replace("{{ session }}", "B"));
      const fileB = await downloaded(page, b);
      expect(fileB.name).toBe("outbox-ticket-42-race-session-b.sql");
      expect(fileB.lines[1]).toBe(
        "-- The run used 2 sessions at once: this is session B. Open one psql window (psql -X) per",
      );
      expect(fileB.lines.some((l) => /^-- step \d+ of \d+ \(session B\): run now, it will wait$/.test(l))).toBe(
        true,
      );
      expect(fileB.lines.some((l) => l.startsWith("CREATE TABLE"))).toBe(false);
      const fileA = await downloaded(page, page.locator('.download a[data-export-session="a"]'));
      expect(fileA.name).toBe("outbox-ticket-42-race-session-a.sql");
      expect(fileA.lines).toContain("CREATE TABLE tickets (");
    });
  });
}

test.describe("download as psql without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the link is a plain download after a plain form post", async ({ page }) => {
    await page.goto("/?lang=en");
    await page.locator('#attempt-form input[name="crash"][value="after_update"]').check();
    await Promise.all([page.waitForNavigation(), page.locator("#attempt-form button[type=submit]").click()]);
    await expect(page.locator("section.outcome")).toHaveAttribute("data-outcome", "crashed_after_update");
    const file = await downloaded(page, downloadLink(page, "en"));
    expect(file.name).toBe("outbox-ticket-42-after_update-session-a.sql");
    expect(file.lines[0]).toBe(FIRST_LINE);
  });
});

test("inside the embed the link carries the frame's token", async ({ page }) => {
  await openHydrated(page, "/embed?lang=en");
  const token = new URL(page.url()).searchParams.get("s");
  expect(token).toBeTruthy();
  await attempt(page, { crash: "after_commit" }, "committed_then_crashed");
  // The embed predicts first: the result's tables, and their download, stay folded until the
  // learner opens them.
  await page.locator("details.reveal > summary").click();
  const link = downloadLink(page, "en");
  await expect(link).toHaveAttribute("href", `/api/export?s=${token}&lang=en`);
  const file = await downloaded(page, link);
  expect(file.name).toBe("outbox-ticket-42-after_commit-session-a.sql");
  expect(file.lines[0]).toBe(FIRST_LINE);
});
