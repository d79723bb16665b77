import { expect, Page } from "@playwright/test";

/** Opens a page and waits until the WebAssembly has hydrated it. */
export async function openHydrated(page: Page, path = "/"): Promise<void> {
  await page.goto(path);
  await expect(page.locator("html")).toHaveAttribute("data-hydrated", "true");
}

/** The status cell of a ticket row in the page's tickets table. */
export function ticketStatus(page: Page, id = "ticket-42") {
  return page.locator(`table[data-table="tickets"] tr[data-id="${id}"] [data-col="status"]`);
}
