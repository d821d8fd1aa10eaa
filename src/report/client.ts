/**
 * The report page's own script and styles, inlined by page.ts. Plain ES2017
 * browser JavaScript kept as a string (the build has no browser bundler, and
 * the page must not load anything). Rules it keeps:
 *  - every string from the recording reaches the DOM through textContent or
 *    an attribute value (setAttribute), never innerHTML or markup;
 *  - positions are set through the CSSOM (el.style.left), which the page's
 *    CSP allows, never with style attributes in markup;
 *  - a poke mark is a <button> with an aria-label that says what it is;
 *    focus, hover and click all show its instructions in the #detail panel
 *    (an aria-live region); Tab moves between rows, arrow keys within them.
 */
export const CLIENT_JS = String.raw`(function () {
'use strict';
var D = JSON.parse(document.getElementById('perfpoke-data').textContent);
var app = document.getElementById('app');
var detail = document.getElementById('detail');
var KINDS = ['jump-label', 'static-call', 'ftrace', 'kprobe', 'optprobe', 'bpf-trampoline',
  'trampoline-create', 'trampoline-remove', 'other'];
function kindClass(k) { return 'k-' + (KINDS.indexOf(k) >= 0 ? k : 'other'); }
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function add(parent, tag, cls, text) { var e = el(tag, cls, text); parent.appendChild(e); return e; }
function section(id, title) {
  var s = add(app, 'section', 'card');
  s.id = id;
  s.setAttribute('aria-labelledby', id + '-h');
  var h = add(s, 'h2', null, title);
  h.id = id + '-h';
  return s;
}
function secs(ns) { return ns === null ? 'no time' : (ns / 1e9).toFixed(6) + ' s'; }
function pct(ns) { return D.span > 0 ? Math.max(0, Math.min(100, (ns / D.span) * 100)) : 50; }
function table(parent, caption, heads, rows) {
  var wrap = add(parent, 'div', 'scroll');
  var t = add(wrap, 'table');
  add(t, 'caption', null, caption);
  var tr = add(add(t, 'thead'), 'tr');
  heads.forEach(function (h) { add(tr, 'th', null, h).setAttribute('scope', 'col'); });
  var tb = add(t, 'tbody');
  rows.forEach(function (r) {
    var row = add(tb, 'tr');
    r.forEach(function (c) { add(row, 'td', null, c); });
  });
  return t;
}
function kv(parent, pairs) {
  var dl = add(parent, 'dl', 'kv');
  pairs.forEach(function (p) { add(dl, 'dt', null, p[0]); add(dl, 'dd', null, p[1]); });
  return dl;
}

document.getElementById('subtitle').textContent = D.name + ': ' + D.check.verdict;
document.title = 'perfpoke report: ' + D.name;

var head = section('recording', 'Recording');
kv(head, D.header.map(function (h) { return [h.label, h.value]; }));

var chk = section('check', 'Check verdict');
var vp = add(chk, 'p');
add(vp, 'span', 'verdict v-' + D.check.verdict, D.check.verdict);
add(chk, 'p', null, D.check.summary);
if (D.check.reasons.length) {
  var ul = add(chk, 'ul', 'reasons');
  D.check.reasons.forEach(function (r) {
    var li = add(ul, 'li');
    add(li, 'strong', null, r.code + ': ');
    add(li, 'span', null, r.why);
    add(li, 'div', 'hint', 'What to do: ' + r.hint);
  });
}
D.check.notes.forEach(function (n) { add(chk, 'p', 'note', 'Note: ' + n); });

var cnt = section('counts', 'Record counts');
table(cnt, 'Records per type (perf report --stats)', ['type', 'records'],
  D.counts.map(function (c) { return [c.type, String(c.count)]; }));

// ---- poke timeline
var tl = section('timeline', 'Poke timeline');
add(tl, 'p', 'intro', 'One row per poked site (address order), time on x in seconds since ' + D.t0 +
  ' (span ' + secs(D.span) + '). Each mark is one TEXT_POKE, coloured by kind. Hover, focus or click a mark ' +
  'for its instructions; Tab moves between rows, arrow keys between marks, Escape closes the details.');
var seen = {};
D.pokes.forEach(function (p) { seen[p.kind] = (seen[p.kind] || 0) + 1; });
var leg = add(tl, 'ul', 'legend');
leg.setAttribute('aria-label', 'legend');
Object.keys(seen).sort().forEach(function (k) {
  var li = add(leg, 'li');
  add(li, 'span', 'sw ' + kindClass(k)).setAttribute('aria-hidden', 'true');
  li.appendChild(document.createTextNode(k + ' (' + seen[k] + ')'));
});
var li1 = add(leg, 'li');
add(li1, 'span', 'sw sw-stale').setAttribute('aria-hidden', 'true');
li1.appendChild(document.createTextNode('square, red outline: stale poke (old bytes differ from the code)'));
var li2 = add(leg, 'li');
add(li2, 'span', 'sw sw-dup').setAttribute('aria-hidden', 'true');
li2.appendChild(document.createTextNode('ring: delivered more than once (Linux 6.1 copies, folded)'));
var li3 = add(leg, 'li');
add(li3, 'span', 'sw sw-window').setAttribute('aria-hidden', 'true');
li3.appendChild(document.createTextNode('hatched band: where a change at a stale site is missing'));

function axis(parent) {
  var row = add(parent, 'div', 'tl-row axis');
  row.setAttribute('aria-hidden', 'true');
  add(row, 'div', 'tl-label', 'time (s)');
  var tr = add(row, 'div', 'track axis-track');
  // enough decimals that the five ticks differ
  var digits = Math.min(9, Math.max(0, Math.ceil(-Math.log10(Math.max(D.span, 1) / 4 / 1e9)) + 1));
  for (var i = 0; i <= 4; i++) {
    var t = add(tr, 'span', 'tick', ((D.span * i) / 4 / 1e9).toFixed(digits));
    t.style.left = i * 25 + '%';
  }
}
axis(tl);
var rowsBox = add(tl, 'div', 'tl-rows');
var bySite = D.sites.map(function () { return []; });
var ignored = [];
D.pokes.forEach(function (p, i) { (p.site >= 0 && bySite[p.site] ? bySite[p.site] : ignored).push(i); });
function markLabel(p, i) {
  return 'poke ' + (i + 1) + ' at ' + (p.time || 'no time') + ' on cpu ' + p.cpu + ', ' + p.kind + ', ' +
    (p.before || '(no code)') + ' becomes ' + (p.after || '(no code)') +
    (p.verdict !== 'consistent' ? ', ' + p.verdict : '') + (p.copies ? ', delivered ' + (p.copies + 1) + ' times' : '');
}
var firstMark = null;
function tlRow(label, lost, list, site) {
  var row = add(rowsBox, 'div', 'tl-row');
  row.setAttribute('role', 'group');
  var lab = add(row, 'div', 'tl-label', label);
  var name = label + ', ' + list.length + ' poke' + (list.length === 1 ? '' : 's');
  if (site && site.stale) {
    row.classList.add('stale-site');
    add(lab, 'span', 'lost', site.stale + ' stale: ' + site.lostText);
    name += ', stale: ' + site.lostText;
  }
  row.setAttribute('aria-label', name);
  var tr = add(row, 'div', 'track');
  if (site && site.stale && site.lostAfter !== null) {
    var w = add(tr, 'div', 'window');
    var a = pct(site.lostAfter);
    var b = site.lostBefore === null ? 100 : pct(site.lostBefore);
    w.style.left = a + '%';
    w.style.width = Math.max(0.4, b - a) + '%';
    w.setAttribute('role', 'img');
    w.setAttribute('aria-label', site.lostText);
    w.title = site.lostText;
  }
  list.forEach(function (i, k) {
    var p = D.pokes[i];
    var m = add(tr, 'button', 'mark ' + kindClass(p.kind));
    m.type = 'button';
    if (p.verdict !== 'consistent') m.classList.add('stale');
    if (p.copies) m.classList.add('dup');
    if (p.t === null) m.classList.add('notime');
    m.style.left = pct(p.t === null ? 0 : p.t) + '%';
    m.setAttribute('aria-label', markLabel(p, i));
    m.dataset.i = String(i);
    m.tabIndex = k === 0 ? 0 : -1;
    if (!firstMark) firstMark = m;
  });
}
D.sites.forEach(function (s, i) {
  if (bySite[i].length || s.stale) tlRow((s.sym || s.start) + ' ' + s.start, null, bySite[i], s);
});
if (ignored.length) tlRow('not applied (perf ignores these pokes)', null, ignored, null);
if (!D.pokes.length) add(tl, 'p', 'empty', 'This recording holds no TEXT_POKE records.');

var current = null;
function show(m) {
  var p = D.pokes[Number(m.dataset.i)];
  if (!p) return;
  if (current) current.classList.remove('sel');
  current = m;
  m.classList.add('sel');
  detail.textContent = '';
  var h = add(detail, 'h2', null, 'Poke ' + (Number(m.dataset.i) + 1) + ' of ' + D.pokes.length + ': ' + p.kind);
  h.id = 'detail-h';
  var close = add(detail, 'button', 'close', 'Close');
  close.type = 'button';
  close.addEventListener('click', hide);
  var dl = add(detail, 'dl', 'pairs');
  [
    ['time', p.time || '(none)'], ['cpu', String(p.cpu)], ['address', p.addr], ['symbol', p.sym || '?'],
    ['verdict', p.verdict], ['copies', p.copies ? p.copies + ' more (one per extra text_poke event)' : 'none'],
    ['bytes', (p.old || '(none)') + ' -> ' + (p.new || '(none)'), 1],
    ['before', p.before || '(no code)', 1], ['after', p.after || '(no code)', 1],
  ].forEach(function (x) {
    var d = add(dl, 'div', x[2] ? 'pair wide' : 'pair');
    add(d, 'dt', null, x[0]);
    add(d, 'dd', null, x[1]);
  });
  detail.hidden = false;
}
function hide() {
  detail.hidden = true;
  if (current) { current.classList.remove('sel'); current.focus(); }
}
function markOf(e) { var t = e.target; return t && t.classList && t.classList.contains('mark') ? t : null; }
rowsBox.addEventListener('mouseover', function (e) { var m = markOf(e); if (m) show(m); });
rowsBox.addEventListener('focusin', function (e) { var m = markOf(e); if (m) show(m); });
rowsBox.addEventListener('click', function (e) { var m = markOf(e); if (m) show(m); });
function moveTo(from, to) {
  if (!to) return;
  from.tabIndex = -1;
  var old = to.parentNode.querySelector('.mark[tabindex="0"]');
  if (old) old.tabIndex = -1;
  to.tabIndex = 0;
  to.focus();
}
rowsBox.addEventListener('keydown', function (e) {
  var m = markOf(e);
  if (!m) return;
  var marks = Array.prototype.slice.call(m.parentNode.querySelectorAll('.mark'));
  var k = marks.indexOf(m);
  var rows = Array.prototype.slice.call(rowsBox.querySelectorAll('.track'));
  var r = rows.indexOf(m.parentNode);
  var other = function (d) { var t = rows[r + d]; return t ? t.querySelector('.mark') : null; };
  if (e.key === 'ArrowRight') moveTo(m, marks[k + 1]);
  else if (e.key === 'ArrowLeft') moveTo(m, marks[k - 1]);
  else if (e.key === 'ArrowDown') { var n = other(1); if (n) n.focus(); }
  else if (e.key === 'ArrowUp') { var u = other(-1); if (u) u.focus(); }
  else return;
  e.preventDefault();
});
document.addEventListener('keydown', function (e) { if (e.key === 'Escape' && !detail.hidden) hide(); });

// ---- stale sites
var staleSites = D.sites.filter(function (s) { return s.stale > 0; });
if (staleSites.length) {
  var ss = section('stale', 'Stale sites');
  table(ss, 'Sites whose pokes disagree with the code: a change is missing in the window', ['site', 'symbol',
    'stale pokes', 'missing window'], staleSites.map(function (s) {
    return [s.start, s.sym, String(s.stale), s.lostText];
  }));
}

// ---- Intel PT errors
if (D.pt) {
  var pt = section('pt', 'Intel PT decode errors');
  add(pt, 'p', 'intro', 'Errors of the instruction-flow decoder per CPU, on the timeline\'s time axis: decoded with ' +
    'the recording\'s pokes applied (red) and over the code before any poke (grey).');
  table(pt, 'Decode errors per CPU', ['cpu', 'with pokes', 'without pokes'], D.pt.cpus.map(function (c) {
    return ['cpu ' + c.cpu, String(c.withPokes), String(c.withoutPokes)];
  }));
  var shownW = D.pt.withPokes.length, shownWo = D.pt.withoutPokes.length;
  var sum = function (k) { return D.pt.cpus.reduce(function (a, c) { return a + c[k]; }, 0); };
  if (shownW < sum('withPokes') || shownWo < sum('withoutPokes'))
    add(pt, 'p', 'note', 'Marks: ' + shownW + ' of ' + sum('withPokes') + ' errors with pokes and ' + shownWo +
      ' of ' + sum('withoutPokes') + ' without, evenly spaced through each CPU\'s errors.');
  var box = add(pt, 'div', 'pt-rows');
  box.setAttribute('aria-hidden', 'true');
  axis(box);
  D.pt.cpus.forEach(function (cc) {
    var c = cc.cpu;
    [['with pokes', D.pt.withPokes, 'err'], ['without pokes', D.pt.withoutPokes, 'err nopoke']].forEach(function (v) {
      var row = add(box, 'div', 'tl-row');
      add(row, 'div', 'tl-label', 'cpu ' + c + ' ' + v[0]);
      var tr = add(row, 'div', 'track');
      v[1].filter(function (e) { return e.cpu === c && e.t !== null; }).forEach(function (e) {
        add(tr, 'span', v[2]).style.left = pct(e.t) + '%';
      });
    });
  });
  var det = add(pt, 'details');
  add(det, 'summary', null, 'First errors with pokes (up to 200)');
  table(det, 'Decode errors with pokes applied', ['cpu', 'time', 'ip', 'message', 'reason'],
    D.pt.withPokes.slice(0, 200).map(function (e) { return [String(e.cpu), secs(e.t), e.ip, e.message, e.reason]; }));
}

// ---- samples
var sm = section('samples', 'Samples over time');
if (!D.samples.total) add(sm, 'p', 'empty', 'This recording holds no samples.');
else {
  add(sm, 'p', 'intro', D.samples.total + ' samples, counted per ' + secs(D.samples.binNs) + ' bin, per event.');
  var chart = add(sm, 'div', 'chart');
  chart.setAttribute('role', 'img');
  chart.setAttribute('aria-label', 'samples per time bin: ' + D.samples.events.map(function (e) {
    return e.name + ' ' + e.bins.reduce(function (a, b) { return a + b; }, 0);
  }).join(', '));
  var xs = D.samples.events[0].bins.map(function (_, i) { return (i * D.samples.binNs) / 1e9; });
  var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
  var opts = {
    width: Math.max(260, chart.clientWidth), height: 160,
    scales: { x: { time: false, range: [0, D.span / 1e9] } },
    axes: [{ label: 'seconds since ' + D.t0 }, { label: 'samples' }],
    series: [{ label: 'time (s)' }].concat(D.samples.events.slice(0, 6).map(function (e, i) {
      return { label: e.name, stroke: COLORS[i], fill: COLORS[i] + '33', width: 1.5, points: { show: false },
        paths: uPlot.paths.stepped({ align: 1 }) };
    })),
  };
  var series = D.samples.events.slice(0, 6).map(function (e) { return e.bins; });
  var plot = new uPlot(opts, [xs].concat(series), chart);
  window.addEventListener('resize', function () {
    plot.setSize({ width: Math.max(260, chart.clientWidth), height: 160 });
  });
  var row = function (c) { return [c.name, String(c.count)]; };
  table(sm, 'Samples per command (comm)', ['comm', 'samples'], D.comms.map(row));
  table(sm, 'Samples per object (dso)', ['dso', 'samples'], D.dsos.map(row));
}

// ---- table fallback
var all = section('poke-table', 'All pokes (table)');
var dt = add(all, 'details');
add(dt, 'summary', null, 'All ' + D.pokes.length + ' pokes as a table');
table(dt, 'Every TEXT_POKE in apply order', ['#', 'time', 'cpu', 'address', 'symbol', 'kind', 'verdict', 'before',
  'after', 'copies'], D.pokes.map(function (p, i) {
  return [String(i + 1), p.time, String(p.cpu), p.addr, p.sym, p.kind, p.verdict, p.before, p.after, String(p.copies)];
}));
document.body.setAttribute('data-ready', '1');
})();
`;

export const PAGE_CSS = `
:root{--fg:#1b1b1b;--mut:#555;--line:#dcdfe4}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:#f4f5f7}
.skip{position:absolute;left:-9999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:10}
header.top{padding:10px 16px;background:#1f2a44;color:#fff}
h1{margin:0;font-size:20px}#subtitle{margin:2px 0 0;overflow-wrap:anywhere}
main{max-width:1400px;margin:0 auto;padding:6px 12px 45vh}
.card{background:#fff;border:1px solid var(--line);border-radius:6px;padding:10px 12px;margin:10px 0}
h2{font-size:17px;margin:0 0 6px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:1px 12px;margin:0}
dl.kv dt{font-weight:600;color:var(--mut)}dl.kv dd{margin:0;overflow-wrap:anywhere}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0}
caption{text-align:left;font-weight:600;color:var(--mut)}
th,td{text-align:left;padding:2px 6px;border-bottom:1px solid #eceef1;vertical-align:top;overflow-wrap:anywhere}
.verdict{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:700}
.v-consistent{background:#d9f2dd;color:#0b5d1e}.v-inconsistent{background:#fbd9d9;color:#8a1010}
.v-inconclusive{background:#fff1c2;color:#6b4e00}
.hint{color:var(--mut)}
.legend{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:2px 14px;font-size:13px}
.sw{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:4px;vertical-align:-1px}
.sw-stale{border-radius:1px;background:#fff;outline:2px solid #c00}
.sw-dup{background:#fff;box-shadow:0 0 0 2px #333}
.sw-window{border-radius:0;background:repeating-linear-gradient(45deg,#fbd9d9 0 3px,#e88 3px 6px)}
.tl-row{display:grid;grid-template-columns:minmax(9rem,17rem) 1fr;align-items:center;border-bottom:1px solid #f0f1f3;
min-height:22px}
.tl-label{font:12px/1.3 ui-monospace,monospace;padding-right:8px;overflow-wrap:anywhere}
.tl-label .lost{display:block;color:#8a1010;font-family:system-ui,sans-serif}
.track{position:relative;height:22px;margin:0 10px}
.axis-track{border-bottom:1px solid #999;height:18px}
.tick{position:absolute;bottom:1px;font-size:11px;color:var(--mut);transform:translateX(-50%);white-space:nowrap}
.mark{position:absolute;top:4px;width:14px;height:14px;margin-left:-7px;border-radius:50%;border:1px solid #fff;
padding:0;cursor:pointer}
.mark.stale{border-radius:1px;outline:2px solid #c00}
.mark.dup{box-shadow:0 0 0 2px #fff,0 0 0 3px #333}
.mark:focus-visible,.mark.sel{outline:3px solid #000;outline-offset:1px;z-index:3}
.window{position:absolute;top:1px;height:20px;background:repeating-linear-gradient(45deg,#fbd9d9 0 4px,#f0a8a8 4px 8px);
border:1px solid #c00}
.err{position:absolute;top:5px;width:2px;height:12px;margin-left:-1px;background:#c00}
.err.nopoke{background:#777}
.k-jump-label{background:#1f77b4}.k-static-call{background:#9467bd}.k-ftrace{background:#2ca02c}
.k-kprobe{background:#d62728}.k-optprobe{background:#ff7f0e}.k-bpf-trampoline{background:#8c564b}
.k-trampoline-create{background:#17becf}.k-trampoline-remove{background:#bcbd22}.k-other{background:#7f7f7f}
.detail{position:fixed;left:0;right:0;bottom:0;background:#fffdf3;border-top:2px solid #1f2a44;padding:6px 12px;
max-height:40vh;overflow:auto;font-size:13px;z-index:5}
.detail h2{display:inline-block;margin-right:12px}
.detail dl.pairs{display:flex;flex-wrap:wrap;gap:0 18px;margin:2px 0 0}
.pair{display:flex;gap:6px}.pair.wide{flex-basis:100%}
.pair dt{font-weight:600;color:var(--mut)}.pair dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
.chart{width:100%;overflow:hidden}
#counts table,#samples table{width:auto;min-width:40%}
@media (max-width:640px){
.tl-row{grid-template-columns:1fr}.track{margin:0 8px 4px}
dl.kv{grid-template-columns:1fr}dl.kv dd{margin-bottom:3px}
main{padding:4px 6px 50vh}h1{font-size:18px}
}
`;
