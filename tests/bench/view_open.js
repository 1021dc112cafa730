// Opens one memsnap HTML page in chromium (puppeteer-core) and prints the seconds from the
// navigation to the view's own "drawn" signal (window.memsnapView.drawnAt, the script's
// performance.now(), whose origin is the navigation). Best of three fresh pages.
// node view_open.js NODE_MODULES CHROMIUM PAGE
'use strict';
const path = require('path');
const [modules, chromium, page] = process.argv.slice(2);
const puppeteer = require(path.resolve(modules, 'puppeteer-core'));

(async () => {
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions'] });
  let best = Infinity;
  for (let run = 0; run < 3; ++run) {
    const tab = await browser.newPage();
    await tab.setViewport({ width: 1400, height: 1000 });
    await tab.goto('file://' + path.resolve(page), { waitUntil: 'load', timeout: 120000 });
    await tab.waitForFunction(() => document.documentElement.getAttribute('data-view') === 'drawn', { timeout: 120000 });
    // The first paint after drawing, so that laying the page out counts too.
    const ms = await tab.evaluate(() => new Promise((resolve) =>
      requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0))));
    best = Math.min(best, ms / 1000);
    await tab.close();
  }
  await browser.close();
  console.log(best.toFixed(3));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
