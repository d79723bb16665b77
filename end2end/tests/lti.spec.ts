import AxeBuilder from "@axe-core/playwright";
import { APIRequestContext, expect, FrameLocator, Page, test } from "@playwright/test";
import { LANGS, Lang } from "./helpers";

/** A real LTI 1.3 platform (end2end/lti-platform/, on the PyPI package lti1p3platform) that
 *  scripts/test.sh starts and registers the playground in. */
const PLATFORM = process.env.LTI_PLATFORM_URL ?? "";
test.skip(!PLATFORM, "LTI_PLATFORM_URL is unset: scripts/test.sh starts the LTI test platform");
// One platform for all of them, and the outage test takes it down for everybody.
test.describe.configure({ mode: "serial" });

/** Learner ids are new on every run, so a rerun against the same servers starts clean. */
const RUN = Date.now().toString(36);
const learner = (name: string, lang: Lang) => `${name}-${lang}-${RUN}`;

interface Score {
  lineitem: string;
  userId: string;
  scoreGiven: number;
  scoreMaximum: number;
  activityProgress: string;
  gradingProgress: string;
  timestamp: string;
}
interface Received {
  scores: Score[];
  duplicates: number;
  outage_attempts: number;
}

/** What the platform's own AGS endpoint has received for `user`, in order. */
async function received(request: APIRequestContext, user: string): Promise<Received> {
  const answer = await request.get(`${PLATFORM}/test/scores?user=${encodeURIComponent(user)}`);
  expect(answer.ok()).toBe(true);
  return answer.json();
}

/** The latest score for `user` as given/maximum, or null before the first one. */
async function latest(request: APIRequestContext, user: string): Promise<string | null> {
  const last = (await received(request, user)).scores.at(-1);
  return last ? `${last.scoreGiven}/${last.scoreMaximum}` : null;
}

/** Every request the platform refused (the tool's auth request, assertion, token, score). */
async function expectNoRefusals(request: APIRequestContext) {
  const answer = await request.get(`${PLATFORM}/test/refusals`);
  expect(await answer.json()).toEqual([]);
}

/** Opens the platform's course page as `user`: the platform starts the login in its frame,
 *  and the frame must end on the playground's embed, hydrated, in `lang`. Returns the frame
 *  and its sandbox token. */
async function launch(page: Page, baseURL: string, user: string, lang: Lang) {
  await page.goto(`${PLATFORM}/course?user=${encodeURIComponent(user)}&lang=${lang}`);
  await expect(page.locator("#learner")).toHaveText(user);
  const tool: FrameLocator = page.frameLocator("iframe#tool");
  await expect(tool.locator("html")).toHaveAttribute("data-hydrated", "true");
  await expect(tool.locator("html")).toHaveAttribute("lang", lang);
  await expect(tool.locator("header.page-header")).toHaveCount(0);

  // The playground really is in the platform's page: a child frame of its main frame.
  expect(new URL(page.url()).origin).toBe(new URL(PLATFORM).origin);
  const frame = await (await page.locator("iframe#tool").elementHandle())!.contentFrame();
  expect(frame!.parentFrame()).toBe(page.mainFrame());
  const at = new URL(frame!.url());
  expect(at.origin).toBe(new URL(baseURL).origin);
  expect(at.pathname).toBe("/embed");
  expect(at.searchParams.get("lang")).toBe(lang);
  return { tool, sandbox: at.searchParams.get("s") };
}

/** Runs an attempt with `crash` in the frame: one row of the failure table explored. */
async function explore(tool: FrameLocator, crash: string, outcome: string) {
  await tool.locator(`#attempt-form input[name="crash"][value="${crash}"]`).check();
  await tool.locator("#attempt-form button[type=submit]").click();
  await expect(tool.locator("section.outcome")).toHaveAttribute("data-outcome", outcome);
}

for (const lang of LANGS) {
  test(`a launch from an LTI 1.3 platform: two rows explored send 2/6 to its gradebook, a relaunch continues, another learner starts empty (${lang})`, async ({
    page,
    request,
    baseURL,
  }) => {
    const alice = learner("alice", lang);
    const first = await launch(page, baseURL!, alice, lang);
    const map = first.tool.locator(".progress");
    await expect(map).toHaveAttribute("data-explored", "0");
    await expect(map).toHaveAttribute("data-total", "6");

    await explore(first.tool, "after_insert", "crashed_before_commit");
    await explore(first.tool, "after_update", "crashed_after_update");
    await expect(map).toHaveAttribute("data-explored", "2");
    const axe = await new AxeBuilder({ page }).analyze();
    const found = axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    expect(found, `${lang}, the course page with the playground`).toEqual([]);

    // The platform's own AGS endpoint receives the score, for that learner, once each.
    await expect.poll(() => latest(request, alice), { timeout: 30_000 }).toBe("2/6");
    const got = await received(request, alice);
    expect(got.scores.at(-1)).toMatchObject({
      lineitem: "lesson-1",
      userId: alice,
      activityProgress: "InProgress",
      gradingProgress: "FullyGraded",
    });
    expect(got.scores.map((s) => s.scoreGiven)).toEqual(got.scores.map((s) => s.scoreGiven).sort((a, b) => a - b));
    expect(got.duplicates).toBe(0);

    // The same learner again: the same sandbox, the map goes on.
    const again = await launch(page, baseURL!, alice, lang);
    expect(again.sandbox).toBe(first.sandbox);
    await expect(again.tool.locator(".progress")).toHaveAttribute("data-explored", "2");
    await expect(again.tool.locator('tr[data-row="crash_before_commit"] .row-mark')).toHaveCount(1);

    // Somebody else on the same link starts from nothing.
    const bob = await launch(page, baseURL!, learner("bob", lang), lang);
    expect(bob.sandbox).not.toBe(first.sandbox);
    await expect(bob.tool.locator(".progress")).toHaveAttribute("data-explored", "0");
    await expect(bob.tool.locator(".row-mark")).toHaveCount(0);
    for (const score of (await received(request, learner("bob", lang))).scores) {
      expect(score.scoreGiven).toBe(0);
    }
    await expectNoRefusals(request);
  });
}

test("scores due while the platform is down arrive once it is back, none twice", async ({
  page,
  request,
  baseURL,
}) => {
  const carol = learner("carol", "en");
  const { tool } = await launch(page, baseURL!, carol, "en");
  const down = await (await request.post(`${PLATFORM}/test/outage?down=1`)).json();
  try {
    await explore(tool, "after_insert", "crashed_before_commit");
    await explore(tool, "after_update", "crashed_after_update");
    // The tool tried while the platform answered 503, and none of the two rows got through.
    await expect
      .poll(async () => (await received(request, carol)).outage_attempts, { timeout: 30_000 })
      .toBeGreaterThan(down.attempts);
    expect((await received(request, carol)).scores.filter((s) => s.scoreGiven > 0)).toEqual([]);
  } finally {
    await request.post(`${PLATFORM}/test/outage?down=0`);
  }
  await expect.poll(() => latest(request, carol), { timeout: 30_000 }).toBe("2/6");
  const got = await received(request, carol);
  expect(new Set(got.scores.map((s) => s.timestamp)).size).toBe(got.scores.length);
  expect(got.duplicates).toBe(0);
  await expectNoRefusals(request);
});
