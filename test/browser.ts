/**
 * Headless Chromium for the report tests: Debian's `chromium` at its system
 * path, driven by playwright-core (no browser download), with a fresh
 * profile and nothing that reaches the network. A missing Chromium skips
 * with the reason locally and fails under CI=true (require-tool.ts).
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { cannotCompare, type SkippableContext } from './require-tool.js';
import { tempDir } from './temp-dir.js';

export const CHROMIUM = '/usr/bin/chromium';

/** The flags every headless run uses: no sandbox (root), nothing that reaches the network. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** A browser context, or null (skipped, or failed under CI) when Chromium is not installed. */
export async function openBrowser(t: SkippableContext): Promise<BrowserContext | null> {
  if (!existsSync(CHROMIUM)) {
    cannotCompare(t, `Chromium is not installed at ${CHROMIUM} (apt-get install chromium)`);
    return null;
  }
  const profile = mkdtempSync(join(tempDir('perfpoke-chromium-'), 'profile-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    offline: true,
  });
}
