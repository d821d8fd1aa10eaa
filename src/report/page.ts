/**
 * The report as one self-contained HTML file: uPlot (read from the installed
 * `uplot` package, a runtime dependency), the page's own script and styles
 * (client.ts) and the data, all inlined, so it opens from disk anywhere.
 *
 * Safety: the data goes in a `<script type="application/json">` (never run)
 * with `<`, `>` and `&` escaped as \u003c… so no recording string can close
 * the element; the page script reads it with JSON.parse and writes it with
 * textContent only. The Content-Security-Policy allows nothing but the two
 * inline scripts and the one style element, by hash: no network, no other
 * script, no inline event handler, no image.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CLIENT_JS, PAGE_CSS } from './client.js';
import type { ReportData } from './gather.js';

const require = createRequire(import.meta.url);

interface Assets {
  uplotJs: string;
  uplotCss: string;
}

let assets: Assets | undefined;

/** uPlot's browser build and its styles, from node_modules (once per process). */
export function uplotAssets(): Assets {
  if (!assets) {
    const dist = (f: string): string => readFileSync(require.resolve(`uplot/dist/${f}`), 'utf8');
    assets = { uplotJs: dist('uPlot.iife.min.js'), uplotCss: dist('uPlot.min.css') };
  }
  return assets;
}

const sha256 = (s: string): string => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

/** JSON that stays inert inside <script type="application/json">: nothing in it can end the element. */
export function inertJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function reportHtml(data: ReportData): string {
  const { uplotJs, uplotCss } = uplotAssets();
  // a script element ends at the first "</script": uPlot's build has none, and ours neither
  for (const s of [uplotJs, CLIENT_JS])
    if (/<\/script/i.test(s)) throw new Error('an inlined script contains "</script"');
  const css = `${uplotCss}\n${PAGE_CSS}`;
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(uplotJs)} ${sha256(CLIENT_JS)}`,
    `style-src ${sha256(css)}`,
    "img-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>perfpoke report</title>
<style>${css}</style>
</head>
<body>
<a class="skip" href="#timeline">Skip to the poke timeline</a>
<header class="top"><h1>perfpoke report</h1><p id="subtitle"></p></header>
<main id="app"><noscript>This report draws its content with JavaScript; the data is in the
element with id perfpoke-data.</noscript></main>
<div id="detail" class="detail" role="status" aria-live="polite" hidden></div>
<script type="application/json" id="perfpoke-data">${inertJson(data)}</script>
<script>${uplotJs}</script>
<script>${CLIENT_JS}</script>
</body>
</html>
`;
}
