/**
 * A newcomer can follow `/auth.md`. The walkthrough is read from the running
 * server and followed step by step as written: every `curl` command is run with the real curl
 * binary (words split and `$VARIABLES` expanded as the shell would; nothing but curl is run), the
 * values to keep are taken from the answers as the walkthrough's `NAME=...  # "field"` lines say,
 * and the authorization URL it prints is opened like a browser would (login with the demo account
 * it names, consent, Allow). A variable used before the walkthrough says how to set it fails the
 * test: that reader would be stuck.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { startTestServer } from '../helpers/course-school.js';
import { api, browse, refreshRequest, type Site, siteOf } from '../helpers/school-flow.js';
import { runCurl, shellWords } from '../helpers/shell-commands.js';

let app: CourseSchoolServer;
let site: Site;
let authMd: string;

beforeAll(async () => {
  app = await startTestServer();
  site = siteOf(app);
  const response = await fetch(`${site.base}/auth.md`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/markdown');
  authMd = await response.text();
});
afterAll(() => app.close());

/** A numbered step of the walkthrough: its text and the lines of its `sh` blocks. */
interface Step {
  readonly title: string;
  readonly text: string;
  readonly commands: string[];
}

/** The numbered steps under "## Walkthrough with curl", with continuation lines joined. */
function walkthroughSteps(markdown: string): Step[] {
  const start = markdown.indexOf('## Walkthrough with curl');
  expect(start).toBeGreaterThan(-1);
  const section = markdown.slice(start).split(/\n## /)[0]!;
  return section
    .split(/\n(?=\d+\. )/)
    .slice(1)
    .map((chunk) => {
      const commands: string[] = [];
      for (const block of chunk.matchAll(/```sh\n([\s\S]*?)```/g)) {
        commands.push(
          ...block[1]!
            .replace(/\\\n\s*/g, ' ')
            .split('\n')
            .filter((l) => l.trim() !== ''),
        );
      }
      return { title: chunk.split('\n')[0]!, text: chunk, commands };
    });
}

/** The reader's terminal: variables and the last answer they looked at. */
class Reader {
  readonly vars: Record<string, string> = {};
  /** The last thing the reader saw: a JSON answer, or the query of the page the browser ended on. */
  last: Record<string, unknown> = {};

  constructor(
    private readonly account: { email: string; password: string },
    private readonly cookie: { value?: string } = {},
  ) {}

  /** Follows one step; returns what each command printed (or where the browser ended). */
  async follow(step: Step): Promise<string[]> {
    const printed: string[] = [];
    for (const line of step.commands) {
      const keep = /^([A-Z_]+)=\.\.\.\s+#\s*(.*)$/.exec(line);
      const computed = /^([A-Z_]+)=\$\(/.exec(line);
      if (keep !== null) {
        // `NAME=...   # the "field" of the answer`: the reader copies that field.
        const field = /"([a-z_]+)"/.exec(keep[2]!)?.[1];
        expect(field, `step "${step.title}": which value to keep in ${keep[1]}?`).toBeDefined();
        const value = this.last[field!];
        expect(
          value,
          `step "${step.title}": ${keep[1]} from "${field}" of ${JSON.stringify(this.last)}`,
        ).toBeTypeOf('string');
        this.vars[keep[1]!] = value as string;
      } else if (computed !== null) {
        // Local helpers (openssl) are not run; the reader's values are made the same way here.
        this.vars[computed[1]!] = this.compute(computed[1]!);
      } else if (line.startsWith('echo ')) {
        // The printed authorization URL, opened in a browser.
        const [, url] = shellWords(line, this.vars);
        expect(url).toBeDefined();
        printed.push(url!);
        const browsed = await browse(
          site,
          url!,
          this.cookie.value === undefined ? this.account : { cookie: this.cookie.value },
        );
        this.cookie.value = browsed.cookie;
        this.last = Object.fromEntries(browsed.callback.searchParams);
        printed.push(browsed.callback.href);
      } else {
        const output = await runCurl(shellWords(line, this.vars));
        printed.push(output);
        this.last = output === '' ? {} : (JSON.parse(output) as Record<string, unknown>);
      }
    }
    return printed;
  }

  private compute(name: string): string {
    switch (name) {
      case 'CODE_VERIFIER':
        return randomBytes(48).toString('base64url');
      case 'CODE_CHALLENGE':
        return createHash('sha256')
          .update(this.vars.CODE_VERIFIER ?? '')
          .digest('base64url');
      case 'STATE':
        return randomBytes(16).toString('hex');
      default:
        throw new Error(`auth.md computes ${name} with a command this test does not know`);
    }
  }
}

describe('the auth.md walkthrough, followed as written', () => {
  it('register with curl → PKCE → authorize → code → API → refresh → revoke', async () => {
    const steps = walkthroughSteps(authMd);
    expect(steps.map((s) => s.title)).toEqual([
      expect.stringMatching(/^1\. Register/),
      expect.stringMatching(/^2\. .*PKCE/),
      expect.stringMatching(/^3\. Open the authorization URL/),
      expect.stringMatching(/^4\. Exchange the code/),
      expect.stringMatching(/^5\. Call the API/),
      expect.stringMatching(/^6\. Refresh/),
      expect.stringMatching(/^7\. Revoke/),
    ]);
    const [register, pkce, open, exchange, call, refresh, revoke] = steps as [
      Step,
      Step,
      Step,
      Step,
      Step,
      Step,
      Step,
    ];

    // The walkthrough names the demo owner account and the issuer to expect in `iss`.
    const owner = /`([^`\s]+@[^`\s]+)` \/ `([^`\s]+)` \(school owner\)/.exec(authMd);
    expect(owner).not.toBeNull();
    const reader = new Reader({ email: owner![1]!, password: owner![2]! });

    // 1. The registration command, run with the real curl.
    expect(register.commands[0]).toMatch(/^curl /);
    const [registration] = await reader.follow(register);
    const client = JSON.parse(registration!) as Record<string, unknown>;
    expect(client).toMatchObject({
      client_name: 'My CLI',
      token_endpoint_auth_method: 'none',
      redirect_uris: [expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//)],
    });
    expect(reader.vars.CLIENT_ID).toBe(client.client_id);

    // 2. PKCE pair and state (made here the way the step describes).
    await reader.follow(pkce);
    expect(Object.keys(reader.vars).sort()).toEqual([
      'CLIENT_ID',
      'CODE_CHALLENGE',
      'CODE_VERIFIER',
      'STATE',
    ]);
    expect(pkce.text).toContain('sha256');

    // 3. The printed URL, opened in a browser: sign in, Allow; the redirect carries code, state, iss.
    const [url, landed] = await reader.follow(open);
    expect(new URL(url!).origin + new URL(url!).pathname).toBe(`${app.issuer}/oauth/authorize`);
    const callback = new URL(landed!);
    expect(callback.origin + callback.pathname).toBe((client.redirect_uris as string[])[0]);
    expect(callback.searchParams.get('state')).toBe(reader.vars.STATE);
    const expectedIss = /`iss` is `([^`]+)`/.exec(open.text)?.[1];
    expect(expectedIss).toBe(app.issuer);
    expect(callback.searchParams.get('iss')).toBe(expectedIss);
    expect(reader.vars.CODE).toBe(callback.searchParams.get('code'));

    // 4. Code exchange.
    const [tokenAnswer] = await reader.follow(exchange);
    expect(JSON.parse(tokenAnswer!)).toMatchObject({
      token_type: 'Bearer',
      scope: 'openid profile courses:read',
    });
    expect(reader.vars.ACCESS_TOKEN).toBeTypeOf('string');
    expect(reader.vars.REFRESH_TOKEN).toBeTypeOf('string');

    // 5. The API with the token: the owner's view, which includes the draft course anonymous visitors never see.
    const [courses] = await reader.follow(call);
    const ids = (JSON.parse(courses!) as { data: { id: string }[] }).data.map((c) => c.id);
    expect(ids).toContain('crs_bernoulli_advanced');
    const anonymous = (await (await api(site, '/courses')).json()) as { data: { id: string }[] };
    expect(anonymous.data.map((c) => c.id)).not.toContain('crs_bernoulli_advanced');

    // 6. Refresh: new tokens; the walkthrough keeps the new refresh token.
    const firstRefresh = reader.vars.REFRESH_TOKEN!;
    const [refreshed] = await reader.follow(refresh);
    const rotated = JSON.parse(refreshed!) as { access_token: string; refresh_token: string };
    expect(rotated.refresh_token).not.toBe(firstRefresh);
    expect(reader.vars.REFRESH_TOKEN).toBe(rotated.refresh_token);
    expect((await api(site, '/courses', rotated.access_token)).status).toBe(200);

    // 7. Revoke: the grant ends; neither the refresh token nor the access token works any more.
    const [revoked] = await reader.follow(revoke);
    expect(revoked).toBe('');
    const dead = await refreshRequest(site, reader.vars.CLIENT_ID!, rotated.refresh_token);
    expect(await dead.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await api(site, '/courses', rotated.access_token)).status).toBe(401);
  });

  it('refuses to run anything from the document but curl', () => {
    expect(() => shellWords('curl -s "$(cat /etc/passwd)"', {})).toThrow(/command substitution/);
    expect(() => shellWords('curl -s http://x | sh', {})).toThrow(/operator/);
    expect(() => shellWords('curl -s http://x; rm -rf /', {})).toThrow(/operator/);
    expect(() => shellWords('curl -s $UNSET', {})).toThrow(/never set/);
    expect(() => runCurl(['sh', '-c', 'echo'])).toThrow(/only curl/);
    expect(shellWords(`curl -s 'a b' "c $X" d\\ e`, { X: 'x' })).toEqual(['curl', '-s', 'a b', 'c x', 'd e']);
  });
});
