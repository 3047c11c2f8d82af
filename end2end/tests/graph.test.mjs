// Follow the money in Debian's Chromium, driven by playwright-core: a signed-in
// account that an operator switched on and granted credits (the real `ledger`
// CLI against the server's database) watches the share suite's scanned wallet,
// opens /wallets/{address}/graph, sees the ECharts graph drawn from the
// server's charming option and the cost of an expansion, expands the wallet
// one hop from its ledger, and sees the new nodes in the chart and the balance
// after the charge. No console error, no failed request; a screenshot is kept.
//
//   LEDGER_URL=... SHARE_TOKEN=... E2E_LEDGER_BIN=... E2E_DATABASE_URL=... \
//     node --test tests/graph.test.mjs
//
// Env:
//   LEDGER_URL        base URL of a running server
//   SHARE_TOKEN       the share suite's live link (its wallet is the one expanded)
//   E2E_LEDGER_BIN    the server binary, run as the operator's CLI
//   E2E_DATABASE_URL  the server's database
//   LEDGER_E2E_OUT    where screenshots go (run.sh: its run directory)
//   CHROMIUM          browser binary (default /usr/bin/chromium)

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { installWallet, testWallet } from './test-wallet.mjs';

const BASE = (process.env.LEDGER_URL ?? '').replace(/\/+$/, '');
const TOKEN = process.env.SHARE_TOKEN ?? '';
const BIN = process.env.E2E_LEDGER_BIN ?? '';
const DB = process.env.E2E_DATABASE_URL ?? '';
if (!BASE || !TOKEN || !BIN || !DB) {
  throw new Error('LEDGER_URL, SHARE_TOKEN, E2E_LEDGER_BIN and E2E_DATABASE_URL must be set; run end2end/run.sh');
}
const OUT = join(process.env.LEDGER_E2E_OUT || join(tmpdir(), 'ledger-e2e'), 'screenshots');
mkdirSync(OUT, { recursive: true });

let browser;
const wallet = testWallet();

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

/** The operator's CLI against the server's database; its stdout. */
function operator(...args) {
  return execFileSync(BIN, args, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: DB, NO_COLOR: '1' },
    encoding: 'utf8',
  });
}

/** The number in "1.25 USD". */
function usd(text) {
  const m = /(-?\d+(?:\.\d+)?)\s*USD/.exec(text);
  assert.ok(m, `an amount in USD in ${JSON.stringify(text)}`);
  return Number(m[1]);
}

test('an account expands a watched wallet hop by hop in the graph view, paying from its credits', async () => {
  const report = await (await fetch(`${BASE}/s/${TOKEN}/report.json`)).json();
  const address = report.address;
  assert.match(address, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'the share suite\'s wallet');

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    await installWallet(context, wallet);
    const page = await context.newPage();
    const problems = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    // A navigation cancels what the page it leaves was still loading (the
    // wasm bundle, the icon): net::ERR_ABORTED is not a failure.
    page.on('requestfailed', (req) => {
      const why = req.failure()?.errorText;
      if (why !== 'net::ERR_ABORTED') problems.push(`request failed: ${req.url()} (${why})`);
    });
    page.on('response', (res) => {
      if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
    });

    await page.goto(`${BASE}/signin`);
    await page.click('#siws-button');
    await page.waitForURL(`${BASE}/wallets`);

    // Off by default: the page says so and offers no expansion.
    await page.goto(`${BASE}/wallets`);
    await page.fill('#wallet-address', address);
    await page.fill('#wallet-label', 'graph e2e');
    await Promise.all([page.waitForLoadState('load'), page.click('#add-wallet-form button[type="submit"]')]);
    await page.goto(`${BASE}/wallets/${address}/graph`, { waitUntil: 'load' });
    assert.equal(await page.locator('#expand-form').count(), 0, 'no expand form while the feature is off');
    assert.match(await page.locator('main').innerText(), /not switched on/);

    // The operator switches it on and grants credits, as docs/follow-the-money.md says.
    await page.goto(`${BASE}/credits`);
    const grant = /ledger credits grant --account (acct_[0-9A-Za-z_]+)/.exec(await page.content());
    assert.ok(grant, 'the Credits page names the grant command with the account');
    const account = grant[1];
    operator('accounts', 'feature', '--account', account, 'follow_the_money', 'on');
    assert.equal(operator('credits', 'grant', '--account', account, '--usd', '1').trim(), '1000000', 'the balance after, in atomic USDC');

    await page.goto(`${BASE}/wallets/${address}/graph`, { waitUntil: 'load' });
    await page.waitForLoadState('networkidle');
    await page.waitForSelector('#graph canvas', { timeout: 30_000 });
    assert.equal(await page.evaluate(() => typeof window.echarts), 'object', 'ECharts loaded from /vendor');
    const box = await page.locator('#graph').boundingBox();
    assert.ok(box && box.width > 600 && box.height > 400, `the graph has room: ${JSON.stringify(box)}`);
    const shown = (await page.locator('#graph-balance').innerText()).trim();
    const before = usd(shown);
    assert.equal(before, 1, 'the granted dollar');
    const cost = await page.locator('#expand-cost').innerText();
    const price = usd(cost);
    assert.ok(price > 0 && price < 1, `the cost is shown before the expansion: ${cost}`);
    const nodesIn = () =>
      page.evaluate(() => window.echarts.getInstanceByDom(document.getElementById('graph')).getOption().series[0].data.length);
    const start = await nodesIn();
    const tableRows = () =>
      page.evaluate(() => ({
        nodes: [...document.querySelectorAll('table.nodes tbody tr td:first-child')].map((td) => td.textContent),
        edges: document.querySelectorAll('table.edges tbody tr').length,
      }));
    const rowsBefore = await tableRows();

    await page.selectOption('#expand-node', address);
    await page.selectOption('#expand-source', 'ledger');
    // A slow expansion (a live one took 7.8 s): held back here for a
    // moment so the busy state can be seen and checked.
    let release;
    const held = new Promise((resolve) => {
      release = resolve;
    });
    await page.route(`${BASE}/wallets/${address}/graph`, async (route) => {
      if (route.request().method() === 'POST') await held;
      await route.continue();
    });
    await page.click('#expand-form button[type="submit"]');
    const button = page.locator('#expand-button');
    await page.waitForFunction(() => document.getElementById('expand-form')?.getAttribute('aria-busy') === 'true');
    assert.equal(await button.isDisabled(), true, 'the button is disabled while it runs');
    assert.equal((await button.innerText()).trim(), 'Expanding…');
    await page.screenshot({ path: join(OUT, 'graph-busy.png') });
    release();
    await page.waitForFunction(
      (was) => document.getElementById('graph-balance')?.textContent.trim() !== was,
      shown,
      { timeout: 30_000 },
    );
    await page.unroute(`${BASE}/wallets/${address}/graph`);
    const outcome = await page.locator('#graph-outcome').innerText();
    const after = usd(await page.locator('#graph-balance').innerText());
    assert.ok(Math.abs(before - price - after) < 1e-9, `charged the price shown: ${before} - ${price} = ${after}`);
    const grown = await nodesIn();
    assert.ok(grown > start, `the hop's counterparties joined the chart (${start} -> ${grown}); ${outcome}`);
    // The tables under the chart gained the same nodes and the hop's edges.
    const rowsAfter = await tableRows();
    const chartIds = await page.evaluate(() =>
      window.echarts.getInstanceByDom(document.getElementById('graph')).getOption().series[0].data.map((n) => n.id),
    );
    assert.deepEqual([...rowsAfter.nodes].sort(), [...chartIds].sort(), 'one node row per node in the chart');
    assert.ok(rowsAfter.nodes.length > rowsBefore.nodes.length, `node rows ${rowsBefore.nodes.length} -> ${rowsAfter.nodes.length}`);
    assert.ok(rowsAfter.edges > rowsBefore.edges, `edge rows ${rowsBefore.edges} -> ${rowsAfter.edges}`);

    assert.equal(await button.isDisabled(), false, 'the button is back');
    assert.equal((await button.innerText()).trim(), 'Expand');
    // Every node carries a label on the chart.
    const labels = await page.evaluate(() => {
      const o = window.echarts.getInstanceByDom(document.getElementById('graph')).getOption().series[0];
      return { show: o.label?.show, names: o.data.map((n) => n.name) };
    });
    assert.equal(labels.show, true, 'labels shown');
    assert.ok(labels.names.includes('graph e2e'), `the wallet by its label: ${labels.names}`);
    assert.ok(labels.names.every((n) => typeof n === 'string' && n.length > 0), `${labels.names}`);

    // Paid for, so kept: a reload shows the hop again.
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('#graph canvas', { timeout: 30_000 });
    assert.equal(await nodesIn(), grown, 'the kept hop is drawn after a reload');
    assert.equal((await tableRows()).edges, rowsAfter.edges, 'and its edges listed');
    await page.waitForTimeout(1500);
    await page.screenshot({ path: join(OUT, 'graph-kept-1280.png'), fullPage: true });

    // A refusal is an error, not a green notice.
    await page.evaluate(() => {
      const select = document.getElementById('expand-node');
      select.add(new Option('not-an-address', 'not-an-address'));
      select.value = 'not-an-address';
    });
    problems.length = 0;
    await page.click('#expand-form button[type="submit"]');
    const error = page.locator('#graph-error');
    await error.waitFor({ timeout: 10_000 });
    assert.equal(await error.getAttribute('role'), 'alert');
    assert.equal(await error.getAttribute('class'), 'error');
    const color = await error.evaluate((el) => getComputedStyle(el).color);
    assert.equal(color, 'rgb(155, 28, 28)', 'the error colour');
    // The refusal's 400 is the answer under test, not a problem.
    for (let i = problems.length - 1; i >= 0; i -= 1) {
      if (/HTTP 400|status of 400/.test(problems[i])) problems.splice(i, 1);
    }
    await page.screenshot({ path: join(OUT, 'graph-error.png') });
    await page.setViewportSize({ width: 390, height: 900 });
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('#graph canvas', { timeout: 30_000 });
    await page.waitForTimeout(1500);
    await page.screenshot({ path: join(OUT, 'graph-kept-390.png'), fullPage: true });
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= 390, `the graph page fits a 390 px phone: ${wide}`);

    // The credit ledger explains the charge line by line.
    const movements = operator('credits', 'show', '--account', account);
    assert.match(movements, /grant/);
    assert.match(movements, /charge/);

    assert.deepEqual(problems, [], problems.join('\n'));
  } finally {
    await context.close();
  }
});
