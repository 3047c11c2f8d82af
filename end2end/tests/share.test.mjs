// The share page /s/{token} in Debian's Chromium, driven by playwright-core:
// its three charts are drawn by the ECharts copy Ledger serves (no console
// error, no failed request, a canvas in every chart), it reads the same with
// JavaScript off (the tables; the charts stay hidden), and screenshots of the
// page and of its card are kept in the run directory.
//
//   LEDGER_URL=http://127.0.0.1:PORT SHARE_TOKEN=... node --test tests/share.test.mjs
//
// Env:
//   LEDGER_URL      base URL of a running server
//   SHARE_TOKEN     a live share link's token (run.sh seeds one with
//                   examples/share_seed before it starts the server)
//   LEDGER_E2E_OUT  where screenshots go (run.sh: its run directory)
//   CHROMIUM        browser binary (default /usr/bin/chromium)

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

const BASE = (process.env.LEDGER_URL ?? '').replace(/\/+$/, '');
const TOKEN = process.env.SHARE_TOKEN ?? '';
if (!BASE || !TOKEN) {
  throw new Error('LEDGER_URL and SHARE_TOKEN must be set; run end2end/run.sh');
}
const OUT = join(process.env.LEDGER_E2E_OUT || join(tmpdir(), 'ledger-e2e'), 'screenshots');
mkdirSync(OUT, { recursive: true });
const PAGE = `/s/${TOKEN}`;

let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
});

after(async () => {
  await browser?.close();
});

async function open(path, { javaScriptEnabled }) {
  const context = await browser.newContext({ javaScriptEnabled, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
  });
  const response = await page.goto(`${BASE}${path}`, { waitUntil: 'load' });
  assert.equal(response?.status(), 200, `GET ${path}`);
  assert.equal(response.headers()['x-robots-tag'], 'noindex, nofollow');
  if (javaScriptEnabled) await page.waitForLoadState('networkidle');
  return { context, page, problems };
}

test('the share page draws its three charts with the served ECharts, without errors', async () => {
  const { context, page, problems } = await open(PAGE, { javaScriptEnabled: true });
  try {
    for (const id of ['chart-value', 'chart-allocation', 'chart-flows']) {
      const chart = page.locator(`#${id}`);
      assert.equal(await chart.count(), 1, `#${id} is on the page`);
      await page.waitForSelector(`#${id}[data-drawn="true"] canvas`, { timeout: 10_000 });
      assert.ok(await chart.isVisible(), `#${id} is visible`);
      const box = await chart.boundingBox();
      assert.ok(box && box.width > 300 && box.height > 200, `#${id} has room: ${JSON.stringify(box)}`);
    }
    assert.equal(await page.evaluate(() => typeof window.echarts), 'object', 'ECharts loaded from /vendor');
    assert.equal(await page.locator('#table-value').isVisible(), false, 'the value table folds once its chart is drawn');
    // Give the force layout a moment to settle before the picture.
    await page.waitForTimeout(1500);
    await page.screenshot({ path: join(OUT, 'share-page.png'), fullPage: true });
    assert.deepEqual(problems, [], problems.join('\n'));
  } finally {
    await context.close();
  }
});

test('with JavaScript off the share page shows the same numbers as tables', async () => {
  const { context, page, problems } = await open(PAGE, { javaScriptEnabled: false });
  try {
    for (const id of ['table-value', 'table-allocation', 'table-flows', 'table-positions', 'table-ledger']) {
      assert.equal(await page.locator(`#${id}`).count(), 1, `#${id} is on the page`);
    }
    assert.ok((await page.locator('#table-ledger tbody tr').count()) > 10, 'ledger rows');
    assert.ok((await page.locator('#table-allocation tbody tr').count()) >= 1, 'allocation rows');
    assert.ok(await page.locator('#table-ledger').isVisible(), 'the ledger table is visible');
    assert.ok(await page.locator('#table-value').isVisible(), 'the value table is open without JavaScript');
    assert.equal(await page.locator('#chart-value').isVisible(), false, 'no empty chart box without JavaScript');
    const headline = await page.locator('#headline').innerText();
    assert.match(headline, /USD/);
    // The ledger pages with a plain link.
    const older = page.locator('a[rel="next"]');
    assert.equal(await older.count(), 1, 'a link to older entries');
    await older.click();
    await page.waitForLoadState('load');
    assert.match(page.url(), /cursor=/);
    assert.ok((await page.locator('#table-ledger tbody tr').count()) > 10, 'the next page has rows');
    await page.goto(`${BASE}${PAGE}`, { waitUntil: 'load' });
    await page.screenshot({ path: join(OUT, 'share-page-nojs.png'), fullPage: true });
    assert.deepEqual(problems, [], problems.join('\n'));
  } finally {
    await context.close();
  }
});

test('the card is a 1200x630 PNG named by the page\'s Open Graph tags', async () => {
  const html = await (await fetch(`${BASE}${PAGE}`)).text();
  const og = html.match(/<meta property="og:image" content="([^"]+)">/);
  assert.ok(og, 'og:image is on the page');
  assert.ok(html.includes('<meta name="twitter:card" content="summary_large_image">'));
  const response = await fetch(og[1]);
  assert.equal(response.status, 200, og[1]);
  assert.equal(response.headers.get('content-type'), 'image/png');
  const png = Buffer.from(await response.arrayBuffer());
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
  assert.equal(png.readUInt32BE(16), 1200, 'width');
  assert.equal(png.readUInt32BE(20), 630, 'height');
  writeFileSync(join(OUT, 'share-card.png'), png);
});

test('an unknown link is a 404 that says so', async () => {
  const response = await fetch(`${BASE}/s/${'A'.repeat(43)}`);
  assert.equal(response.status, 404);
  assert.match(await response.text(), /no share link at this address/);
});
