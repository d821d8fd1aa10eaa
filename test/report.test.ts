/**
 * perfpoke report in a real browser (headless Chromium, test/browser.ts):
 * for each real-kernel fixture, a simulated Intel PT recording and a
 * recording with dropped pokes, the page loads with no console error, shows
 * one mark per poke that `pokes --json` prints (per kind, stale ones
 * marked), the instructions of a mark on hover, focus and click, the stale
 * sites `check --json` names with their windows, the PT errors per CPU that
 * `decode --json` counts, and fits a phone's width. A crafted recording
 * whose strings are markup shows them as text and runs nothing.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { repoRoot, runCli } from './cli.js';
import { openBrowser } from './browser.js';
import { basicSites, writeKcoreDir } from './fixtures/kcore/scenario.js';
import { tempDir } from './temp-dir.js';
import { writeXssRecording, XSS } from './report-xss.js';

const REAL = ['perf-alone', 'perf-kcore', 'perfpoke-kcore', 'perfpoke-two'].map((n) =>
  join(repoRoot, 'test', 'fixtures', 'real-kernel', n),
);
type Obj = Record<string, unknown>;

let dir: string;
let sim: string;
let dropped: string;
let ctx: BrowserContext | null = null;
let tried = false;

before(() => {
  dir = tempDir('perfpoke-report-');
  sim = join(dir, 'sim-pt');
  assert.equal(runCli(['sim', '-o', sim, '--flips', '6', '--size', '40000']).status, 0);
  dropped = join(dir, 'dropped');
  writeKcoreDir(dropped, basicSites(), { drop: new Set([1, 4]), withTrampoline: true });
});

after(async () => {
  await ctx?.close();
});

async function browser(t: { skip(m?: string): void }): Promise<BrowserContext | null> {
  if (!tried) {
    tried = true;
    ctx = await openBrowser(t);
  } else if (!ctx) await openBrowser(t); // skip (or fail under CI) with the same reason
  return ctx;
}

const jsonLines = (args: string[], type: string, codes = [0]): Obj[] => {
  const r = runCli(args);
  assert.ok(codes.includes(r.status), `${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Obj)
    .filter((o) => o.type === type);
};

const ajv = new Ajv({ allErrors: true, strict: true });
for (const f of ['common', 'report'])
  ajv.addSchema(JSON.parse(readFileSync(join(repoRoot, 'docs', 'json', `${f}.schema.json`), 'utf8')) as object, f);
const validReport = ajv.getSchema('report') ?? assert.fail('docs/json/report.schema.json did not load');

function makeReport(input: string): { html: string; bytes: number } {
  const html = join(dir, `${input.split('/').pop()}.html`);
  const r = runCli(['report', '-i', input, '-o', html, '--json']);
  assert.equal(r.status, 0, r.stderr);
  const line = JSON.parse(r.stdout) as Obj;
  assert.ok(validReport(line), `report --json: ${ajv.errorsText(validReport.errors)}`);
  assert.equal(line.bytes, statSync(html).size);
  return { html, bytes: statSync(html).size };
}

interface Loaded {
  page: Page;
  problems: string[];
  dialogs: string[];
  ms: number;
}

/** Open a report; console errors, page errors, dialogs and non-file requests are collected. */
async function load(c: BrowserContext, html: string): Promise<Loaded> {
  const page = await c.newPage();
  const problems: string[] = [];
  const dialogs: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) problems.push(`request: ${r.url()}`);
  });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const t0 = performance.now();
  await page.goto(pathToFileURL(html).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });
  return { page, problems, dialogs, ms: performance.now() - t0 };
}

/** A locator's text (textContent: markup in it would not be text). */
const text = async (l: Locator): Promise<string> => (await l.textContent()) ?? '';

const countBy = (list: Obj[], key: string): Record<string, number> => {
  const m: Record<string, number> = {};
  for (const o of list) m[String(o[key])] = (m[String(o[key])] ?? 0) + 1;
  return m;
};

/** The detail panel shows poke i's time and instructions, as `pokes --json` prints them. */
async function assertDetail(page: Page, pokes: Obj[], how: string): Promise<void> {
  const i = Number(await page.locator('.mark.sel').getAttribute('data-i'));
  const p = pokes[i];
  assert.ok(p, `${how}: mark ${i} has a poke`);
  const shown = await text(page.locator('#detail'));
  for (const want of [p.time, p.before || '(no code)', p.after || '(no code)', p.addr])
    assert.ok(shown.includes(String(want)), `${how}: detail of poke ${i} lacks ${String(want)}:\n${shown}`);
}

async function checkPokes(page: Page, input: string): Promise<Obj[]> {
  const pokes = jsonLines(['pokes', '-i', input, '--json'], 'poke');
  const marks = page.locator('.mark');
  assert.equal(await marks.count(), pokes.length, `${input}: one mark per poke of pokes --json`);
  const kinds = await marks.evaluateAll((ms) =>
    ms.map((m) => (m as unknown as { className: string }).className.match(/\bk-([a-z-]+)/)?.[1] ?? '?'),
  );
  assert.deepEqual(
    countBy(
      kinds.map((k) => ({ k })),
      'k',
    ),
    countBy(pokes, 'kind'),
    `${input}: marks per kind`,
  );
  // Linux 6.1's second copies (pokes --all-copies marks them with copy_of): a ring on the poke kept
  const copies = jsonLines(['pokes', '-i', input, '--json', '--all-copies'], 'poke').filter((p) => p.copy_of);
  const copied = new Set(copies.map((p) => `${String(p.addr)}@${String((p.copy_of as Obj).time_ns)}`));
  assert.equal(await page.locator('.mark.dup').count(), copied.size, `${input}: marks of pokes delivered twice`);
  // every mark says what it is to a screen reader: time, kind and its instructions
  const labels = await marks.evaluateAll((ms) => ms.map((m) => m.getAttribute('aria-label') ?? ''));
  const ids = await marks.evaluateAll((ms) => ms.map((m) => Number(m.getAttribute('data-i'))));
  labels.forEach((l, k) => {
    const p = pokes[ids[k] ?? -1];
    assert.ok(p && l.includes(String(p.time)) && l.includes(String(p.kind)), `aria-label of mark ${k}: ${l}`);
    assert.ok(l.includes(String(p.before || '(no code)')) && l.includes(String(p.after || '(no code)')), l);
  });
  const stale = await page.locator('.mark.stale').count();
  assert.equal(stale, pokes.filter((p) => p.consistent === false).length, `${input}: stale marks`);
  if (pokes.length === 0) return pokes;
  // hover: the first, a middle and the last mark in page order
  const n = pokes.length;
  for (const k of [0, Math.floor(n / 2), n - 1]) {
    await marks.nth(k).hover({ force: true });
    await assertDetail(page, pokes, `hover mark ${k}`);
  }
  // keyboard: focus a mark, then ArrowRight within its row / ArrowDown to the next row
  await page.mouse.move(0, 0);
  await marks.first().focus();
  await assertDetail(page, pokes, 'focus');
  const first = await page.locator('.mark.sel').getAttribute('data-i');
  await page.keyboard.press(n > 1 ? 'ArrowDown' : 'ArrowRight');
  if (n > 1) {
    assert.notEqual(await page.locator('.mark.sel').getAttribute('data-i'), first, 'arrow key moves');
    await assertDetail(page, pokes, 'arrow key');
  }
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#detail').isHidden(), true, 'Escape closes the details');
  await marks.nth(n - 1).click({ force: true });
  await assertDetail(page, pokes, 'click');
  return pokes;
}

async function phoneFits(page: Page, what: string): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 });
  const wide = (await page.evaluate('document.documentElement.scrollWidth')) as number;
  assert.ok(wide <= 390, `${what}: the page is ${wide} px wide at a 390 px viewport`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

test('real-kernel fixtures: one mark per poke, instructions on hover/focus/click, no console error', async (t) => {
  const c = await browser(t);
  if (!c) return;
  for (const rec of REAL) {
    const { html, bytes } = makeReport(rec);
    assert.ok(bytes < 3 << 20, `${rec}: report is ${bytes} bytes`);
    const { page, problems, ms } = await load(c, html);
    const pokes = await checkPokes(page, rec);
    assert.ok(pokes.length > 200, `${rec}: the 6.1 pokes are on the timeline`);
    const [chk] = jsonLines(['check', '-i', rec, '--json'], 'check', [0, 1, 4]);
    assert.equal(await text(page.locator('#check .verdict')), chk!.verdict);
    await phoneFits(page, rec);
    assert.deepEqual(problems, [], rec);
    t.diagnostic(`${rec.split('/').pop()}: ${(bytes / 1024).toFixed(0)} KiB, loaded in ${ms.toFixed(0)} ms`);
    await page.close();
  }
});

test('dropped pokes: each stale site of check --json is shown with its missing window', async (t) => {
  const c = await browser(t);
  if (!c) return;
  const { html } = makeReport(dropped);
  const { page, problems } = await load(c, html);
  await checkPokes(page, dropped);
  const stale = jsonLines(['check', '-i', dropped, '--json'], 'stale', [1]);
  assert.ok(stale.length >= 2);
  for (const s of stale) {
    const row = page.locator('.tl-row.stale-site', { hasText: String(s.site_start) });
    assert.equal(await row.count(), 1, `row of ${String(s.site_start)}`);
    const win = row.locator('.window');
    const label = (await win.getAttribute('aria-label')) ?? '';
    const after = s.missing_after as Obj | null;
    const bef = s.missing_before as Obj;
    assert.ok(label.includes(after ? String(after.time) : 'the start of the recording'), label);
    assert.ok(label.includes(String(bef.time)), label);
    assert.ok((await text(row)).includes(String(bef.time)), 'the window is also written out');
    // the band ends at the first stale poke's mark
    const box = await win.boundingBox();
    const mark = await row.locator('.mark.stale').first().boundingBox();
    assert.ok(box && mark);
    assert.ok(Math.abs(box.x + box.width - (mark.x + mark.width / 2)) < 2, 'window ends at the stale poke');
  }
  assert.equal(await page.locator('#stale tbody tr').count(), stale.length);
  assert.equal(await text(page.locator('#check .verdict')), 'inconsistent');
  assert.deepEqual(problems, []);
  await page.close();
});

test('simulated Intel PT recording: decode errors per CPU with and without pokes', async (t) => {
  const c = await browser(t);
  if (!c) return;
  const { html } = makeReport(sim);
  const { page, problems } = await load(c, html);
  await checkPokes(page, sim);
  const perCpu = jsonLines(['decode', '-i', sim, '--json'], 'decode_cpu');
  const trs = page.locator('#pt table').first().locator('tbody tr');
  const rows = await Promise.all((await trs.all()).map((tr) => tr.locator('td').allTextContents()));
  assert.equal(rows.length, perCpu.length);
  let without = 0;
  for (const d of perCpu) {
    const cells = rows.find((r) => r[0] === `cpu ${String(d.cpu)}`) ?? [];
    assert.equal(cells[1], String(d.errors), `cpu ${String(d.cpu)}: errors with pokes = decode --json`);
    without += Number(cells[2]);
  }
  assert.ok(without > 0, 'without its pokes the trace does not match the code');
  assert.equal(await page.locator('#pt .err.nopoke').count(), without);
  assert.deepEqual(problems, []);
  await page.close();
});

test('recording strings are text: a comm, file, host and symbol of markup show as text and run nothing', async (t) => {
  const c = await browser(t);
  if (!c) return;
  const rec = join(dir, 'xss.data');
  await writeXssRecording(rec);
  const { html } = makeReport(rec);
  const raw = readFileSync(html, 'utf8');
  assert.ok(!raw.includes(XSS), 'the payload is escaped in the file');
  const { page, problems, dialogs } = await load(c, html);
  const shown = (await text(page.locator('#app'))).split(XSS).length - 1;
  assert.ok(shown >= 4, `the payload shows as text (host, comm, dso, symbol): ${shown}`);
  for (const where of ['#recording', '#samples', '#timeline'])
    assert.ok((await text(page.locator(where))).includes(XSS), where);
  assert.equal(await page.locator('img').count(), 0, 'no img element');
  assert.equal(await page.locator('[onerror]').count(), 0, 'no event handler attribute');
  await page.locator('.mark').first().hover({ force: true });
  assert.ok((await text(page.locator('#detail'))).includes(XSS));
  await page.waitForTimeout(200);
  assert.deepEqual(dialogs, [], 'nothing ran');
  assert.deepEqual(problems, []);
  // the page may not reach the network: its CSP refuses a fetch
  const violated = await page.evaluate(`(async () => {
    const seen = new Promise((res) =>
      document.addEventListener('securitypolicyviolation', (e) => res(e.effectiveDirective)));
    await fetch('http://127.0.0.1:9/').catch(() => undefined);
    return Promise.race([seen, new Promise((res) => setTimeout(() => res('none'), 1000))]);
  })()`);
  assert.equal(violated, 'connect-src');
  await page.close();
});

test('report CLI: --help, bad input exits 2 with one line and writes nothing', () => {
  const h = runCli(['report', '--help']);
  assert.equal(h.status, 0);
  assert.match(h.stdout, /self-contained HTML/);
  const out = join(dir, 'never.html');
  const bad = join(dir, 'not-perf.data');
  writeFileSync(bad, 'not a perf.data file at all, just text\n');
  for (const input of [bad, join(dir, 'missing')]) {
    const r = runCli(['report', '-i', input, '-o', out]);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.equal(existsSync(out), false);
  }
});
