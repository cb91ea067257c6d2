/** Headless Chromium (Debian's, driven by playwright-core) looking at the Temporal Web UI. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export interface WebUiLook {
  listed: boolean;
  detailText: string;
}

/** Debian's headless Chromium with nothing running in the background (no network of its own). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** The page's body text and each iframe's (the UI renders markdown, summary and details, inside sandboxed iframes). */
export async function pageText(page: Page): Promise<string> {
  const texts = [await page.locator('body').innerText()];
  for (const f of page.frames())
    if (f !== page.mainFrame())
      texts.push(
        await f
          .locator('body')
          .innerText()
          .catch(() => ''),
      );
  return texts.join('\n');
}

export async function lookInWebUi(base: string, workflowId: string, screenshot: string): Promise<WebUiLook> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${base}/namespaces/default/workflows`, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    const listed = await page
      .getByText(workflowId)
      .first()
      .waitFor({ timeout: 30_000 })
      .then(
        () => true,
        () => false,
      );
    await page.goto(`${base}/namespaces/default/workflows/${workflowId}`, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    mkdirSync(dirname(screenshot), { recursive: true });
    await page.getByText(workflowId).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: screenshot.replace(/\.png$/, '-timeline.png'), fullPage: true });
    // The summary lives under "User Metadata", the stage under "Search Attributes".
    const texts: string[] = [];
    for (const [tab, marker] of [
      ['User Metadata', 'Current Details'],
      ['Search Attributes', 'GpuprovStage'],
    ] as const) {
      await page
        .getByRole('link', { name: tab })
        .or(page.getByRole('tab', { name: tab }))
        .first()
        .click();
      await page.getByText(marker).first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(500);
      texts.push(await pageText(page));
      await page.screenshot({ path: screenshot.replace(/\.png$/, `-${tab.toLowerCase().replace(/ /g, '-')}.png`), fullPage: true });
    }
    await page.screenshot({ path: screenshot, fullPage: true });
    return { listed, detailText: texts.join('\n') };
  } finally {
    await browser.close();
  }
}
