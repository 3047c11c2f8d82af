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

/** Move the mouse over a drawn chart at a few points across it; the tooltips show. */
async function hover(page, id) {
  const box = await page.locator(`#${id}`).boundingBox();
  assert.ok(box, `#${id} has a box`);
  for (const fx of [0.3, 0.5, 0.7, 0.85]) {
    await page.mouse.move(box.x + box.width * fx, box.y + box.height * 0.5);
    await page.waitForTimeout(250);
  }
}

/** Console messages that are a CSP refusal. */
const cspErrors = (problems) => problems.filter((p) => /Content Security Policy|Refused to apply/i.test(p));

test('hovering the share page charts shows tooltips with no CSP error', async () => {
  const { context, page, problems } = await open(PAGE, { javaScriptEnabled: true });
  try {
    await page.waitForSelector('#chart-value[data-drawn="true"] canvas', { timeout: 10_000 });
    await page.waitForSelector('#chart-flows[data-drawn="true"] canvas', { timeout: 10_000 });
    await hover(page, 'chart-value');
    await page.screenshot({ path: join(OUT, 'share-tooltip-value.png') });
    await hover(page, 'chart-allocation');
    await hover(page, 'chart-flows');
    // The tooltips are drawn on the canvas: no tooltip markup in the page.
    const option = await page.evaluate(
      () => window.echarts.getInstanceByDom(document.getElementById('chart-value')).getOption().tooltip[0].renderMode,
    );
    assert.equal(option, 'richText', 'the value chart draws its tooltip on the canvas');
    assert.equal(cspErrors(problems).length, 0, cspErrors(problems).join('\n'));
    assert.deepEqual(problems, [], problems.join('\n'));
  } finally {
    await context.close();
  }
});

test('the value axis labels are round ticks that never crowd', async () => {
  const { context, page, problems } = await open(PAGE, { javaScriptEnabled: true });
  try {
    await page.waitForSelector('#chart-value[data-drawn="true"] canvas', { timeout: 10_000 });
    const axis = await page.evaluate(() => {
      const chart = window.echarts.getInstanceByDom(document.getElementById('chart-value'));
      const y = chart.getModel().getComponent('yAxis', 0).axis;
      return { ticks: y.scale.getTicks().map((t) => t.value), extent: y.scale.getExtent() };
    });
    assert.ok(axis.ticks.length >= 3, JSON.stringify(axis));
    const step = axis.ticks[1] - axis.ticks[0];
    // Evenly spaced, the bounds included: min and max are ticks themselves.
    for (let i = 1; i < axis.ticks.length; i += 1) {
      assert.ok(Math.abs(axis.ticks[i] - axis.ticks[i - 1] - step) < step * 1e-6, JSON.stringify(axis));
    }
    assert.equal(axis.ticks[0], axis.extent[0], 'the minimum is a tick');
    assert.equal(axis.ticks[axis.ticks.length - 1], axis.extent[1], 'the maximum is a tick');
    assert.deepEqual(problems, [], problems.join('\n'));
  } finally {
    await context.close();
  }
});

test('the sample report is labelled, read only, and its charts hover without CSP errors at 390 and 1280 px', async () => {
  for (const width of [390, 1280]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    const problems = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    try {
      const home = await page.goto(`${BASE}/`, { waitUntil: 'load' });
      assert.equal(home?.status(), 200);
      assert.equal(await page.locator('#home-signin').count(), 1, 'sign in on the home page');
      assert.equal(await page.locator('#developers a[href="/llms.txt"]').count(), 1, 'llms.txt in the developer section');
      assert.equal(await page.locator('header a[href="/llms.txt"]').count(), 0, 'not in the bar');
      await page.screenshot({ path: join(OUT, `home-${width}.png`), fullPage: true });
      await Promise.all([page.waitForURL(`${BASE}/sample`), page.click('#home-sample')]);
      await page.waitForLoadState('networkidle');
      assert.match(await page.locator('#sample-banner').innerText(), /^sample/i, 'labelled Sample');
      assert.equal(await page.locator('form[method="post"]').count(), 0, 'read only: no form that changes anything');
      assert.ok((await page.locator('#table-ledger tbody tr').count()) >= 10, 'the sample ledger');
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(wide <= width, `no wider than the screen: ${wide} > ${width}`);
      if (await page.locator('#chart-value[data-drawn="true"]').count()) {
        await hover(page, 'chart-value');
        await hover(page, 'chart-flows');
      }
      await page.screenshot({ path: join(OUT, `sample-${width}.png`), fullPage: true });
      assert.equal(cspErrors(problems).length, 0, cspErrors(problems).join('\n'));
    } finally {
      await context.close();
    }
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
