// Every portal page on a phone, in Debian's Chromium: signed in with a test
// wallet that watches the share suite's seeded wallet (so the report view
// has value, positions, transactions and counterparties to lay out), each
// page is loaded at 390 px (an iPhone 12-15) and fails if the document is
// wider than the screen (`scrollWidth > 390`): a table, an address or a
// code block pushing the page sideways. Screenshots of every page at
// 390 px, and of the report view at 390 and 1280 px, are kept.
//
//   LEDGER_URL=http://127.0.0.1:PORT SHARE_TOKEN=... node --test tests/phones.test.mjs
//
// Env:
//   LEDGER_URL      base URL of a running server
//   SHARE_TOKEN     a live share link's token (run.sh seeds one with
//                   examples/share_seed before it starts the server)
//   LEDGER_E2E_OUT  where screenshots go (run.sh: its run directory)
//   CHROMIUM        browser binary (default /usr/bin/chromium)

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { width } from './overflow.mjs';
import { installWallet, testWallet } from './test-wallet.mjs';

const BASE = (process.env.LEDGER_URL ?? '').replace(/\/+$/, '');
const TOKEN = process.env.SHARE_TOKEN ?? '';
if (!BASE || !TOKEN) {
  throw new Error('LEDGER_URL and SHARE_TOKEN must be set; run end2end/run.sh');
}
const OUT = join(process.env.LEDGER_E2E_OUT || join(tmpdir(), 'ledger-e2e'), 'screenshots');
mkdirSync(OUT, { recursive: true });
const PHONE = 390;

let browser;
let context;
let page;
let seeded;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
});

after(async () => {
  await context?.close();
  await browser?.close();
});

test('a person signs in at 390 px and lands where they were going', async () => {
  context = await browser.newContext({ viewport: { width: PHONE, height: 844 } });
  await installWallet(context, testWallet());
  page = await context.newPage();
  // The report view of the seeded wallet, asked for signed out: sign in first, then back.
  const report = await (await fetch(`${BASE}/s/${TOKEN}/report.json`)).json();
  seeded = report.address;
  assert.ok(seeded, 'the share suite seeded a wallet');
  await page.goto(`${BASE}/wallets`);
  assert.match(page.url(), /\/signin\?next=%2Fwallets$/, 'sent to sign in, with next');
  await page.click('#siws-button');
  await page.waitForURL(`${BASE}/wallets`);
  const who = await page.innerText('#signed-in-as');
  assert.match(who, /^Signed in as \S+/);
  assert.doesNotMatch(who, /acct_/, 'a name, never the account id');
  await page.fill('#wallet-address', seeded);
  await page.fill('#wallet-label', 'seeded wallet');
  await Promise.all([page.waitForURL(`${BASE}/wallets`), page.click('#add-wallet-form button[type="submit"]')]);
});

test('no portal page is wider than a 390 px phone', async () => {
  assert.ok(page, 'signed in by the test before');
  const pages = [
    ['/', 'home'],
    ['/tools', 'tools'],
    ['/signin', 'signin'],
    ['/keys', 'keys'],
    ['/wallets', 'wallets'],
    [`/wallets/${seeded}`, 'report'],
    [`/wallets/${seeded}?range=all`, 'report-all'],
    [`/wallets/${seeded}/graph`, 'graph'],
    [`/wallets/remove?address=${seeded}`, 'confirm-remove'],
    ['/payments', 'payments'],
    ['/settings', 'settings'],
    ['/credits', 'credits'],
    [`/s/${TOKEN}`, 'share'],
  ];
  const wide = [];
  for (const [path, name] of pages) {
    await page.goto(`${BASE}${path}`, { waitUntil: 'load' });
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(OUT, `phone-${name}-${PHONE}.png`), fullPage: true });
    const { scrollWidth, offenders } = await width(page);
    if (scrollWidth > PHONE) wide.push(`${path} is ${scrollWidth}px wide: ${offenders.join(', ')}`);
  }
  assert.deepEqual(wide, [], wide.join('\n'));
});

test('the report view reads value first, tokens by symbol, one row per transaction', async () => {
  for (const w of [PHONE, 1280]) {
    await page.setViewportSize({ width: w, height: w === PHONE ? 844 : 900 });
    await page.goto(`${BASE}/wallets/${seeded}`, { waitUntil: 'load' });
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(OUT, `report-${w}.png`), fullPage: true });
    // What one screen shows at each part, for looking at.
    for (const part of ['main', '#allocation', '#positions', '#ledger', '#downloads']) {
      await page.locator(part).first().evaluate((el) => {
        window.scrollTo({ top: el.getBoundingClientRect().top + window.scrollY, behavior: 'instant' });
      });
      await page.screenshot({ path: join(OUT, `report-${w}-${part.replace(/\W/g, '') || 'top'}.png`) });
    }
  }
  // Value and its chart come before the downloads, which come before sharing.
  const order = await page.evaluate(() =>
    ['#headline', '#chart-value', '#table-positions', '#table-ledger', '#downloads', '#share-links'].map(
      (s) => {
        const el = document.querySelector(s);
        return el ? el.getBoundingClientRect().top + window.scrollY : -1;
      },
    ),
  );
  assert.ok(order.every((top, i) => top >= 0 && (i === 0 || top > order[i - 1])), `page order: ${order}`);
  // The range tabs; the current one marked.
  assert.equal(await page.locator('nav.tabs a[aria-current="page"]').count(), 2, 'a range and a currency are current');
  // The downloads are one menu.
  assert.equal(await page.locator('#downloads details.menu a').count(), 7);
  // One row per transaction, in words (the seeded signatures are no real
  // ones, so they are shown without an explorer link; tx_rows' and
  // explorer's unit tests cover the words and the links).
  const rows = await page.locator('#table-ledger tbody td.what').allInnerTexts();
  assert.ok(rows.length >= 1, 'transaction rows');
  assert.ok(rows.every((r) => /\S/.test(r) && !/_/.test(r)), `rows read as words: ${rows.slice(0, 3)}`);
  await page.setViewportSize({ width: 1280, height: 900 });
});
