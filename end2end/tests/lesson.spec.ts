import { expect, Page, test } from "@playwright/test";
import {
  attempt,
  expectPageMatchesDatabase,
  LANGS,
  Lang,
  openHydrated,
  press,
  text,
  ticketStatus,
} from "./helpers";

const PAYLOAD_NOT_JSON = '{"event_id": "event-ticket-900", oops';

interface Row {
  title: string;
  /** Steps that bring the sandbox to the row's starting state. */
  setup?: (page: Page, lang: Lang) => Promise<void>;
  run: (page: Page, lang: Lang) => Promise<void>;
  outcome: string;
  failureRow: string;
  status: "open" | "resolved";
  outbox: string[];
}

const resolved = async (page: Page) => attempt(page, { crash: "none" }, "committed");

const rows: Row[] = [
  {
    title: "a crash after the UPDATE leaves ticket-42 open and no outbox row",
    run: (p) => attempt(p, { crash: "after_update" }, "crashed_after_update"),
    outcome: "crashed_after_update",
    failureRow: "crash_after_update",
    status: "open",
    outbox: [],
  },
  {
    title: "a crash after the INSERT, before COMMIT, leaves ticket-42 open and no outbox row",
    run: (p) => attempt(p, { crash: "after_insert" }, "crashed_before_commit"),
    outcome: "crashed_before_commit",
    failureRow: "crash_before_commit",
    status: "open",
    outbox: [],
  },
  {
    title: "a crash after COMMIT leaves both rows, published_at NULL",
    run: (p) => attempt(p, { crash: "after_commit" }, "committed_then_crashed"),
    outcome: "committed_then_crashed",
    failureRow: "committed_before_publish",
    status: "resolved",
    outbox: ["event-ticket-900"],
  },
  {
    title: "a plain commit writes both rows together",
    run: resolved,
    outcome: "committed",
    failureRow: "committed_before_publish",
    status: "resolved",
    outbox: ["event-ticket-900"],
  },
  {
    title: "a resolved ticket is refused by the guard",
    setup: resolved,
    run: (p) => attempt(p, { crash: "after_update" }, "guard_rejected"),
    outcome: "guard_rejected",
    failureRow: "guard_zero_rows",
    status: "resolved",
    outbox: ["event-ticket-900"],
  },
  {
    title: "a retry after support reopens hits the primary key (23505)",
    setup: async (p, lang) => {
      await resolved(p);
      await press(p, lang, "reopen");
      await expect(p.locator("section.outcome")).toHaveAttribute("data-action", "reopen");
    },
    run: (p) => attempt(p, { crash: "none" }, "insert_conflict"),
    outcome: "insert_conflict",
    failureRow: "insert_error",
    status: "open",
    outbox: ["event-ticket-900"],
  },
  {
    title: "a payload that is not JSON fails the INSERT (22P02)",
    run: (p) => attempt(p, { crash: "none", payload: PAYLOAD_NOT_JSON }, "invalid_payload"),
    outcome: "invalid_payload",
    failureRow: "insert_error",
    status: "open",
    outbox: [],
  },
  {
    title: "a lost COMMIT reply that was applied reconciles as committed",
    run: async (p, lang) => {
      await attempt(p, { crash: "commit_reply_lost", fate: "applied" }, "commit_unknown");
      await press(p, lang, "reconcile");
    },
    outcome: "reconciled_committed",
    failureRow: "commit_reply_lost",
    status: "resolved",
    outbox: ["event-ticket-900"],
  },
  {
    title: "a lost COMMIT that never arrived reconciles as not committed",
    run: async (p, lang) => {
      await attempt(p, { crash: "commit_reply_lost", fate: "not_applied" }, "commit_unknown");
      await press(p, lang, "reconcile");
    },
    outcome: "reconciled_not_committed",
    failureRow: "commit_reply_lost",
    status: "open",
    outbox: [],
  },
];

for (const lang of LANGS) {
  test.describe(`failure table (${lang})`, () => {
    for (const row of rows) {
      test(row.title, async ({ page }) => {
        await openHydrated(page, `/?lang=${lang}`);
        if (row.setup) await row.setup(page, lang);
        await row.run(page, lang);

        const outcome = page.locator("section.outcome");
        await expect(outcome).toHaveAttribute("data-outcome", row.outcome);
        await expect(outcome.locator(".outcome-title")).toContainText(
          text(lang, `outcome.${row.outcome}.title`),
        );
        await expect(outcome.locator("[data-matches-model]")).toHaveAttribute("data-matches-model", "true");

        const lit = page.locator('table.failures tr[aria-current="true"]');
        await expect(lit).toHaveCount(1);
        await expect(lit).toHaveAttribute("data-row", row.failureRow);
        await expect(lit).toContainText(text(lang, "failures.here"));

        const db = await expectPageMatchesDatabase(page);
        expect(db.tickets).toEqual([{ id: "ticket-42", status: row.status }]);
        expect(db.outbox.map((r) => r.event_id)).toEqual(row.outbox);
        expect(db.outbox.every((r) => r.published_at === null)).toBe(true);
      });
    }
  });
}

test("the trace shows the crash and PostgreSQL's own rollback", async ({ page }) => {
  await openHydrated(page, "/?lang=en");
  await attempt(page, { crash: "after_insert" }, "crashed_before_commit");
  const steps = page.locator("table.trace tr.trace-row");
  await expect(steps.filter({ hasText: "UPDATE tickets SET status = 'resolved'" })).toHaveCount(1);
  await expect(steps.filter({ hasText: "INSERT INTO outbox" })).toHaveCount(1);
  await expect(steps.filter({ hasText: "COMMIT" })).toHaveCount(0);
  await expect(steps.filter({ hasText: text("en", "trace.sent.process_crashed") })).toHaveCount(1);
  await expect(page.locator('table.trace tr.trace-row[data-actor="postgres"] [data-tx="rolledback"]')).toHaveCount(1);
});

test("two learners never see each other's rows", async ({ browser }) => {
  const alice = await (await browser.newContext()).newPage();
  const bob = await (await browser.newContext()).newPage();
  await openHydrated(alice, "/?lang=en");
  await openHydrated(bob, "/?lang=en");
  await attempt(alice, { crash: "none" }, "committed");

  // Looking costs nothing: Bob has no sandbox until he acts, and sees the initial state.
  await bob.reload();
  await expect(bob.locator("html")).toHaveAttribute("data-hydrated", "true");
  await expect(bob.locator("[data-sandbox]")).toHaveAttribute("data-sandbox", "");
  await expect(ticketStatus(bob)).toHaveText("open");
  await press(bob, "en", "reset");
  await expect(bob.locator("section.outcome")).toHaveAttribute("data-action", "reset");

  const aliceDb = await expectPageMatchesDatabase(alice);
  const bobDb = await expectPageMatchesDatabase(bob);
  expect(aliceDb.tickets[0].status).toBe("resolved");
  expect(bobDb.tickets[0].status).toBe("open");
  expect(bobDb.outbox).toEqual([]);
  expect(await alice.locator("[data-sandbox]").innerText()).not.toBe(
    await bob.locator("[data-sandbox]").innerText(),
  );
});
