/**
 * The report screenshots in docs/: `perfpoke report` of the shipped
 * real-kernel fixture, opened in headless Chromium (the same flags as the
 * browser tests) at 1280 px and at a phone's 390 px, scrolled to the poke
 * timeline with one mark's instructions showing.
 *
 *   node --import tsx scripts/report-screenshots.ts [recording]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { reportOf } from '../src/report/index.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/browser.js';

const input = process.argv[2] ?? 'test/fixtures/real-kernel/perfpoke-kcore';
const dir = mkdtempSync(join(tmpdir(), 'perfpoke-shots-'));
try {
  const html = join(dir, 'report.html');
  writeFileSync(html, (await reportOf(input)).html);
  const ctx = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    offline: true,
    args: CHROMIUM_ARGS,
  });
  for (const [name, width, height] of [
    ['report-1280.png', 1280, 800],
    ['report-phone.png', 390, 844],
  ] as const) {
    const page = await ctx.newPage();
    await page.setViewportSize({ width, height });
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector('body[data-ready="1"]');
    await page.evaluate("document.getElementById('timeline').scrollIntoView()");
    await page.locator('.mark').nth(12).hover({ force: true });
    await page.screenshot({ path: join('docs', name), type: 'png' });
    await page.close();
  }
  await ctx.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
