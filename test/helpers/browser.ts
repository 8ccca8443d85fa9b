/**
 * The Playwright harness of the browser end-to-end tests: `playwright-core` driving Debian's
 * Chromium (no browser download). The rule when the browser is missing: in CI (`CI=true`) the
 * test FAILS, so a broken CI image cannot pass silently; elsewhere it is skipped with a message
 * saying how to install it.
 *
 * @example
 * ```ts
 * const browser = await browserOrSkip(it);      // inside a test: ctx.skip() when allowed
 * const page = await browser.newPage();
 * ```
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where Debian's package puts Chromium; `CHROMIUM_PATH` overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags for a headless run in a container: no sandbox (no user namespaces), no GPU, no background traffic. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] as const;

/** True when the browser can be launched here. */
export function browserAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

/** What to do without a browser: `fail` in CI, `skip` elsewhere. */
export function missingBrowserPolicy(
  env: Readonly<Record<string, string | undefined>> = process.env,
): 'fail' | 'skip' {
  return env.CI === 'true' ? 'fail' : 'skip';
}

/** The message a skipped or failed test shows. */
export const MISSING_BROWSER_MESSAGE = `Chromium not found at ${CHROMIUM_PATH}: install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH)`;

/** Launches headless Chromium. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS] });
}

/**
 * Launches the browser for a test, applying the missing-browser rule: throws in CI, otherwise
 * calls `skip` (vitest's `context.skip`) with the message.
 */
export async function browserOrSkip(skip: (note: string) => void): Promise<Browser> {
  if (!browserAvailable()) {
    if (missingBrowserPolicy() === 'fail')
      throw new Error(`${MISSING_BROWSER_MESSAGE} (required when CI=true)`);
    skip(MISSING_BROWSER_MESSAGE);
    throw new Error(MISSING_BROWSER_MESSAGE); // not reached: vitest's skip throws
  }
  return launchBrowser();
}
