/**
 * Starts the reference server in-process on a free port with memory storage, and small helpers to
 * talk to it over real HTTP like a browser would (cookies, forms).
 */
import { type CourseSchoolServer, startCourseSchool } from '../../examples/course-school/src/app.js';
import { type AppConfig, configFromEnv } from '../../examples/course-school/src/config.js';
import { decodeHtml } from './school-flow.js';

/**
 * Starts a server; `env` overrides the test defaults (`STORAGE=memory`, `PORT=0`), `config` the
 * settings that have no variable (the login and connection limits).
 */
export function startTestServer(
  env: Record<string, string> = {},
  config: Partial<Pick<AppConfig, 'loginLimits' | 'connectionLimits'>> = {},
): Promise<CourseSchoolServer> {
  return startCourseSchool({
    ...configFromEnv({ STORAGE: 'memory', PORT: '0', HOST: '127.0.0.1', ...env }),
    ...config,
  });
}

/** The `name=value` pairs of a response's `Set-Cookie` headers, by name. */
export function cookiesOf(response: Response): Map<string, { value: string; header: string }> {
  const out = new Map<string, { value: string; header: string }>();
  for (const header of response.headers.getSetCookie()) {
    const pair = header.slice(0, header.indexOf(';') === -1 ? header.length : header.indexOf(';'));
    const eq = pair.indexOf('=');
    out.set(pair.slice(0, eq), { value: pair.slice(eq + 1), header });
  }
  return out;
}

/** The value of a hidden form field in an HTML page. */
export function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (match === null) throw new Error(`no hidden field ${name}`);
  // What a browser would post: the attribute value with its character references decoded.
  return decodeHtml(match[1]!);
}

/**
 * Logs in through the login form, as a browser would (it sends `Origin`); returns the session
 * cookie (`name=value`) and the final response. `fetcher` replaces `fetch` (another source address).
 */
export async function login(
  issuer: string,
  email: string,
  password: string,
  returnTo?: string,
  fetcher: (url: string, init?: RequestInit) => Promise<Response> = fetch,
): Promise<{ cookie: string | undefined; response: Response }> {
  const form = await fetcher(
    `${issuer}/login${returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`}`,
  );
  const html = await form.text();
  const loginCookie = [...cookiesOf(form)].map(([name, c]) => `${name}=${c.value}`).join('; ');
  const response = await fetcher(`${issuer}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: loginCookie,
      origin: new URL(issuer).origin,
    },
    body: new URLSearchParams({
      email,
      password,
      csrf_token: hiddenField(html, 'csrf_token'),
      return_to: hiddenField(html, 'return_to'),
    }),
  });
  const session = [...cookiesOf(response)].find(([name, c]) => name.endsWith('cs_session') && c.value !== '');
  return { cookie: session === undefined ? undefined : `${session[0]}=${session[1].value}`, response };
}
