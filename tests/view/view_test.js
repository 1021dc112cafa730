// The interactive HTML view in Debian's chromium, through puppeteer-core (installed beforehand
// by the README's first command and .ci/run into build/node_modules; this test installs
// nothing). For each capture: `trace --format html` (hover shows the stack; selecting the
// peak's event fills #live with rows that sum to the peak `trace --format json` gives; search
// highlights; dragging zooms the axis; a flame graph box zooms), `info --format html`, and
// `diff --format html` of consecutive captures; every page without a console error and
// without a single request. Node 18: no newer features.
//
// node view_test.js MEMSNAP NODE_MODULES CAPTURE_OR_DIRECTORY...
// Exits 0 when every check passed, 1 when one failed, 77 (skip) without chromium or puppeteer-core.
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const SKIP = 77;
const [memsnap, modules, ...inputs] = process.argv.slice(2);
if (!memsnap || !modules || inputs.length === 0) {
  console.error('usage: node view_test.js MEMSNAP NODE_MODULES CAPTURE_OR_DIRECTORY...');
  process.exit(1);
}

function skip(why) {
  console.log('SKIPPED: ' + why);
  process.exit(SKIP);
}

function findChromium() {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    for (const dir of (process.env.PATH || '').split(':')) {
      const candidate = path.join(dir, name);
      if (dir && fs.existsSync(candidate)) return candidate;
    }
  }
  return null;
}

const chromium = findChromium();
if (!chromium) skip('chromium is not installed: the interactive view was not tested');
let puppeteer;
try {
  puppeteer = require(path.resolve(modules, 'puppeteer-core'));
} catch (error) {
  skip(modules + '/puppeteer-core is absent (npm install --prefix ' + path.dirname(modules) +
    ' puppeteer-core@23): the interactive view was not tested');
}

// The captures: files named, and the captures in directories named (expected.json left out).
function capturesOf(names) {
  const out = [];
  for (const name of names) {
    if (!fs.existsSync(name)) skip(name + ' does not exist');
    if (fs.statSync(name).isDirectory()) {
      for (const file of fs.readdirSync(name).sort())
        if (/\.(pickle|pkl|json|html|gz)$/.test(file) && file !== 'expected.json') out.push(path.join(name, file));
    } else {
      out.push(name);
    }
  }
  return out;
}

function run(args) {
  const result = childProcess.spawnSync(memsnap, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memsnap-view-'));
let failures = 0, checks = 0;

function check(ok, what) {
  ++checks;
  if (!ok) {
    ++failures;
    console.log('FAIL ' + what);
  }
  return ok;
}

// Opens a page and records console errors, page errors and every request but the page's own.
// Waits until the view has drawn, unless the page has none (`expectView` false).
async function open(browser, file, expectView = true) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  const problems = [];
  const url = 'file://' + file;
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    if (request.url() === url && request.isNavigationRequest()) return request.continue();
    problems.push('request ' + request.url().slice(0, 120));
    return request.abort();
  });
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push('console ' + message.text());
  });
  page.on('pageerror', (error) => problems.push('page error ' + error.message));
  await page.goto(url, { waitUntil: 'load' });
  const drawn = expectView && await page.waitForFunction(
    () => document.documentElement.getAttribute('data-view') === 'drawn', { timeout: 30000 }).then(() => true, () => false);
  return { page, problems, drawn };
}

async function liveSum(page) {
  return page.$$eval('#live tr[data-bytes]', (rows) => rows.reduce((sum, r) => sum + Number(r.dataset.bytes), 0));
}

// A band whose middle the pointer reaches, with the stack the tooltip must show.
async function hoverBand(page) {
  const target = await page.evaluate(() => {
    const data = JSON.parse(document.getElementById('memsnap-view-data').textContent);
    const paths = Array.from(document.querySelectorAll('#view-timeline path.band, #view-timeline path.merged'));
    paths.sort((a, b) => {
      const x = a.getBoundingClientRect(), y = b.getBoundingClientRect();
      return y.width * y.height - x.width * x.height;
    });
    // Bands are steps and may have holes: the first point of a 10 by 10 grid over the box that
    // the pointer reaches on this band.
    const grid = [];
    for (let i = 0; i < 10; ++i) for (let j = 0; j < 10; ++j) grid.push([0.05 + 0.1 * i, 0.05 + 0.1 * j]);
    for (const p of paths.slice(0, 200)) {
      const box = p.getBoundingClientRect();
      for (const [fx, fy] of grid) {
        const x = box.left + box.width * fx, y = box.top + box.height * fy;
        if (document.elementFromPoint(x, y) !== p) continue;
        const stack = p.hasAttribute('data-band') ? data.bands[Number(p.dataset.band)][4] : null;
        const frames = stack === null || stack < 0 ? null : data.stacks[stack].map((f) => data.frames[f]);
        return { x, y, merged: !p.hasAttribute('data-band'), frames };
      }
    }
    return null;
  });
  if (!check(target !== null, 'a band to hover')) return null;
  await page.mouse.move(target.x, target.y);
  const shown = await page.evaluate(() => {
    const tip = document.getElementById('view-tooltip');
    return { hidden: tip.hidden, text: tip.textContent, stack: (tip.querySelector('pre.stack') || {}).textContent };
  });
  check(!shown.hidden && /site: /.test(shown.text) && /category: /.test(shown.text), 'hover shows size, site, category');
  if (!target.merged) {
    const expected = target.frames.length ? target.frames.slice().reverse().join('\n') : '(no stack recorded)';
    check(shown.stack === expected, 'hover shows the band\'s stack');
  }
  return target;
}

function escapeRegex(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

async function searchHighlights(page, frames) {
  if (!frames || !frames.length) {
    const any = await page.evaluate(() => {
      const data = JSON.parse(document.getElementById('memsnap-view-data').textContent);
      for (const b of data.bands) if (data.stacks[b[4]].length) return data.frames[data.stacks[b[4]][0]];
      return null;
    });
    if (!any) return console.log('  (no band has a recorded frame: search highlights nothing)');
    frames = [any];
  }
  const frame = frames[frames.length - 1];
  await page.type('#view-search', escapeRegex(frame));
  const matched = await page.$$eval('#view-timeline .match', (e) => e.length);
  const note = await page.$eval('#view-search-note', (e) => e.textContent);
  check(matched > 0 && /match/.test(note), 'search for a frame highlights its bands');
  await page.$eval('#view-search', (e) => { e.value = ''; e.dispatchEvent(new Event('input')); });
  const cleared = await page.$$eval('#view-timeline .match', (e) => e.length);
  check(cleared === 0, 'an empty search highlights nothing');
}

async function dragZoom(page, events) {
  const box = await page.$eval('#view-timeline', (e) => {
    const r = e.getBoundingClientRect();
    return { left: r.left, top: r.top, width: r.width, height: r.height };
  });
  const scale = box.width / 1200;
  const x0 = box.left + (86 + 0.3 * 1100) * scale, x1 = box.left + (86 + 0.6 * 1100) * scale;
  const y = box.top + box.height * 0.5;
  await page.mouse.move(x0, y);
  await page.mouse.down();
  await page.mouse.move((x0 + x1) / 2, y);
  await page.mouse.move(x1, y);
  await page.mouse.up();
  const [from, to] = await page.$eval('#view-timeline', (e) => [Number(e.dataset.from), Number(e.dataset.to)]);
  if (events < 4) return console.log('  (' + events + ' events: too few to zoom)');
  check(from > 0 && to < events && to > from, 'dragging zooms the axis to ' + from + '..' + to + ' of ' + events);
  const ticks = await page.$$eval('#view-timeline .tick', (e) => e.map((t) => t.textContent));
  check(ticks.length > 0 && ticks[0] === 'event ' + from, 'the axis labels follow the zoom');
  await page.click('#view-all');
  const all = await page.$eval('#view-timeline', (e) => [Number(e.dataset.from), Number(e.dataset.to)]);
  check(all[0] === 0 && all[1] === events, 'All events zooms back out');
}

async function flameZoom(page, selector, what) {
  const result = await page.evaluate((sel) => {
    const svg = document.querySelector(sel);
    if (!svg) return null;
    const boxes = Array.from(svg.querySelectorAll('g.box')).filter((g) => {
      const r = g.querySelector('rect');
      return Number(r.getAttribute('y')) > 56 && Number(r.getAttribute('width')) > 2 &&
        Number(r.getAttribute('width')) < 1100;
    });
    if (!boxes.length) return { boxes: 0 };
    boxes[0].dispatchEvent(new MouseEvent('click', { bubbles: true }));
    return { boxes: boxes.length, width: Number(boxes[0].querySelector('rect').getAttribute('width')),
      zoomed: svg.getAttribute('data-zoomed') };
  }, selector);
  if (!check(result !== null, what + ': a flame graph')) return;
  if (result.boxes === 0) return console.log('  (' + what + ': no box narrower than the width to zoom into)');
  check(Math.abs(result.width - 1180) < 0.5 && result.zoomed, what + ': clicking a box zooms into it');
}

function clean(problems, what) {
  check(problems.length === 0, what + ': no console error and no request' +
    (problems.length ? ' (' + problems.slice(0, 3).join('; ') + ')' : ''));
}

function cspAllowsOnlyTheScript(html, what) {
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html);
  check(csp && /default-src 'none'/.test(csp[1]) && /script-src 'sha256-[A-Za-z0-9+/=]+'$/.test(csp[1]),
    what + ': the CSP allows the one script by hash and nothing else');
}

async function tracePage(browser, capture, name, html) {
  const json = run(['trace', '--format', 'json', capture]);
  if (json.code !== 0) {
    check(html.code === json.code, name + ': trace html fails as trace json does');
    return console.log('  (trace: ' + json.err.trim().split('\n')[0] + ')');
  }
  if (!check(html.code === 0, name + ': trace --format html')) return;
  const trace = JSON.parse(json.out);
  const file = path.join(work, name + '.trace.html');
  fs.writeFileSync(file, html.out);
  cspAllowsOnlyTheScript(html.out, name);
  const { page, problems, drawn } = await open(browser, file);
  if (check(drawn, name + ': the trace view draws')) {
    const events = trace.source === 'ring buffer' ? trace.events : 0;
    const at = await page.evaluate((e) => window.memsnapView.select(e), trace.peak ? trace.peak.event : 0);
    if (trace.peak && trace.recorded) {
      check(at === trace.peak.event, name + ': the peak\'s event selects the peak');
      const sum = await liveSum(page);
      check(sum === trace.peak.bytes, name + ': #live sums to the peak, ' + sum + ' of ' + trace.peak.bytes + ' B');
    }
    if (events > 0) {
      const band = await hoverBand(page);
      await searchHighlights(page, band && band.frames);
      await dragZoom(page, events);
    }
    await flameZoom(page, '#view-moment-flame svg', name + ' moment');
    const segments = await page.$$eval('#view-segments-end .segment', (e) => e.length);
    const reserved = await page.evaluate(() => window.memsnapView.moment().reserved);
    check(segments > 0 || reserved === 0, name + ': the allocator state draws segments');
  }
  clean(problems, name + ' trace');
  await page.close();
  await withoutScript(browser, file, name);
}

// Without JavaScript the page is the static report: its tables and pictures, and no view.
async function withoutScript(browser, file, name) {
  const page = await browser.newPage();
  await page.setJavaScriptEnabled(false);
  await page.goto('file://' + file, { waitUntil: 'load' });
  const shown = await page.evaluate(() => ({ view: !!document.getElementById('memsnap-view'),
    tables: document.querySelectorAll('table').length, pictures: document.querySelectorAll('svg').length }));
  check(!shown.view && shown.tables > 0 && shown.pictures > 0, name + ': without JavaScript, the static report');
  await page.close();
}

async function plainPage(browser, args, name, kind) {
  const html = run(args);
  if (html.code !== 0) return console.log('  (' + kind + ': ' + html.err.trim().split('\n')[0] + ')');
  const file = path.join(work, name + '.' + kind + '.html');
  fs.writeFileSync(file, html.out);
  const hasView = html.out.includes('id="memsnap-view-data"');
  if (hasView) cspAllowsOnlyTheScript(html.out, name + ' ' + kind);
  const { page, problems, drawn } = await open(browser, file, hasView);
  if (hasView && check(drawn, name + ': the ' + kind + ' view draws')) {
    const m = await page.evaluate(() => window.memsnapView.moment());
    check(await liveSum(page) === m.allocated, name + ' ' + kind + ': #live sums to the moment\'s allocated bytes');
    await flameZoom(page, '.flame:not(#view-moment-flame svg)', name + ' ' + kind + ' report flame graph');
  }
  clean(problems, name + ' ' + kind);
  await page.close();
}

// The data a trace page's view draws, its capture's path taken out: captures that differ only
// in how they were written (pickle protocol, writer, JSON, compression) give the same.
function viewData(html, capture) {
  const found = /<script[^>]*id="memsnap-view-data"[^>]*>([\s\S]*?)<\/script>/.exec(html.out);
  return html.code === 0 && found ? found[1].split(capture).join('').split(path.basename(capture)).join('') : null;
}

async function main() {
  const captures = capturesOf(inputs);
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions', '--disable-background-networking'] });
  const viewed = new Map();  // view data -> the capture whose pages were checked with it
  let previous = null;
  try {
    for (const capture of captures) {
      const name = path.basename(capture).replace(/[^A-Za-z0-9_.-]/g, '_');
      console.log(capture);
      const html = run(['trace', '--format', 'html', capture]);
      const data = viewData(html, capture);
      if (data !== null && viewed.has(data)) {
        console.log('  (the same view data as ' + viewed.get(data) + ', whose pages were checked)');
        continue;
      }
      if (data !== null) viewed.set(data, capture);
      await tracePage(browser, capture, name, html);
      await plainPage(browser, ['info', '--format', 'html', capture], name, 'info');
      if (previous) await plainPage(browser, ['diff', '--format', 'html', previous, capture], name, 'diff');
      previous = capture;
    }
  } finally {
    await browser.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log(checks + ' checks, ' + failures + ' failed');
  process.exit(failures ? 1 : 0);
}

main().catch((error) => {
  console.log('FAIL ' + (error && error.stack ? error.stack : error));
  process.exit(1);
});
