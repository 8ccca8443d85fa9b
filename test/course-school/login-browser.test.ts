/**
 * A real browser signs in through the login page and lands on the account page; the page refuses
 * to be framed (ATK-27). Needs Chromium: see test/helpers/browser.ts for the missing-browser rule.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { browserOrSkip } from '../helpers/browser.js';
import { startTestServer } from '../helpers/course-school.js';

let app: CourseSchoolServer;
let browser: Browser | undefined;

beforeAll(async () => {
  app = await startTestServer();
});
afterAll(async () => {
  await browser?.close();
  await app.close();
});

describe('login in a browser', () => {
  it('signs in with the labelled fields and returns to the account page', async (context) => {
    browser = await browserOrSkip((note) => context.skip(note));
    const page = await browser.newPage();
    await page.goto(`${app.issuer}/account`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('Email').fill('grace@example.com');
    await page.getByLabel('Password').fill('grace-hopper');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${app.issuer}/account`);
    await expect(page.getByRole('heading', { name: 'Your account' }).isVisible()).resolves.toBe(true);
    expect(await page.textContent('main')).toContain('Grace Hopper');
    const cookie = (await page.context().cookies()).find((c) => c.name === 'cs_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
  });

  it('cannot show the login page inside a frame of another origin (ATK-27)', async (context) => {
    browser ??= await browserOrSkip((note) => context.skip(note));
    // Another origin (another port) serves a page that frames the login page, and records whether
    // the frame fired load (also what a blocked frame fires, with the browser's error page) or error.
    const framer = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        '<script>window.frameSettled = new Promise((settle) => { window.settleFrame = settle; });</script>' +
          `<iframe src="${app.issuer}/login" onload="settleFrame('load')" onerror="settleFrame('error')"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve));
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(framer.address() as AddressInfo).port}/`);
      const settled = await page.evaluate(
        () => (window as unknown as { frameSettled: Promise<string> }).frameSettled,
      );
      expect(['load', 'error']).toContain(settled);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      const framed =
        frame === undefined
          ? ''
          : await frame.evaluate(() => document.body?.textContent ?? '').catch(() => '');
      // Blocked by frame-ancestors / X-Frame-Options: the frame shows the browser's error page instead.
      expect(frame?.url()).not.toBe(`${app.issuer}/login`);
      expect(framed).not.toContain('Sign in');
    } finally {
      framer.close();
    }
  });
});
