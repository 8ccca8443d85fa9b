#!/usr/bin/env node
/**
 * The client matrix's browser: what `BROWSER` points at, so a client that "opens the browser"
 * (mcp-remote and the Inspector through the `open` package and xdg-open, Python's `webbrowser`,
 * our Go program) gets headless Chromium. It opens the URL, signs in on the login page, allows on
 * the consent page, and waits until the browser has landed on the client's redirect URI, the way
 * a person would. Each run appends one JSON line to `$PORTCULLIS_OPENER_LOG`: the URL it was
 * given, where it landed, and the error if it did not.
 *
 * Environment: `PORTCULLIS_OPENER_LOG` (required), `PORTCULLIS_OPENER_LOGIN` (JSON: the login
 * form's fields by name, e.g. `{"name":"ada"}`), `CHROMIUM_PATH` (default `/usr/bin/chromium`).
 *
 * Usage: open-in-chromium.mjs <url>
 */
import { appendFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const url = process.argv[2];
const log = process.env.PORTCULLIS_OPENER_LOG;
if (url === undefined || log === undefined) {
  console.error('usage: PORTCULLIS_OPENER_LOG=<file> open-in-chromium.mjs <url>');
  process.exit(2);
}
const login = JSON.parse(process.env.PORTCULLIS_OPENER_LOGIN ?? '{"name":"ada"}');
const redirectUri = new URL(url).searchParams.get('redirect_uri') ?? '';
const landedOnClient = (current) => redirectUri !== '' && current.startsWith(redirectUri.split('?')[0]);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
const entry = { opened: url, landed: undefined, error: undefined };
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(url);
  // The login form (the one with the first field of PORTCULLIS_OPENER_LOGIN): each field, then submit.
  const [first] = Object.keys(login);
  const form = page.locator('form', { has: page.locator(`input[name="${first}"]`) });
  if ((await form.count()) > 0) {
    for (const [name, value] of Object.entries(login))
      await form.locator(`input[name="${name}"]`).fill(value);
    await Promise.all([
      page.waitForURL((current) => !current.pathname.endsWith('/login')),
      form.locator('[type=submit]').click(),
    ]);
  }
  // The consent page, unless the server skipped it.
  if (!landedOnClient(page.url())) {
    await page.click('button[value="allow"]');
  }
  await page.waitForURL((current) => landedOnClient(current.href));
  await page.waitForLoadState();
  entry.landed = page.url();
} catch (error) {
  entry.error = error instanceof Error ? error.message : String(error);
} finally {
  await browser.close();
  appendFileSync(log, `${JSON.stringify(entry)}\n`);
}
process.exit(entry.error === undefined ? 0 : 1);
