/** Headless Chromium on a workflow's detail page in the Temporal Web UI: what text it shows. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { launchChromium, pageText } from './web-ui';

export interface PageLook {
  /** The needle appeared (the page was read until it did, or a bounded number of times). */
  found: boolean;
  text: string;
}

/**
 * Opens `${base}/namespaces/default/workflows/${workflowId}`, waits for the Input and Result card,
 * and reads the page (and its frames) up to 20 times, half a second apart, until `needle` shows.
 */
export async function lookForText(base: string, workflowId: string, needle: string, screenshot: string): Promise<PageLook> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1200 } });
    await page.goto(`${base}/namespaces/default/workflows/${workflowId}`, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    await page.getByText(workflowId).first().waitFor({ timeout: 60_000 });
    // UI 2.54 renders the Input and Result card with a hidden "Input" heading: attached, not visible.
    await page.getByText('Input').first().waitFor({ state: 'attached', timeout: 30_000 });
    let text = '';
    for (let i = 0; i < 20; i++) {
      text = await pageText(page);
      if (text.includes(needle)) break;
      await page.waitForTimeout(500);
    }
    mkdirSync(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    return { found: text.includes(needle), text };
  } finally {
    await browser.close();
  }
}
