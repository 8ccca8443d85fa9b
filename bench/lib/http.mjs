/**
 * The load generator's HTTP client: one keep-alive undici pool per server, a cookie jar per
 * virtual user, and the few HTML and redirect readings a browser would do. Everything here runs
 * in the load-generator process; nothing is measured on the server's side of the socket.
 * @module
 */
import { Pool } from 'undici';

/** An operation failed validation; the message says which step and why. */
export class OpError extends Error {}

/**
 * @typedef {object} HttpResult
 * @property {number} status
 * @property {Record<string, string | string[] | undefined>} headers
 * @property {string} text
 */

/**
 * A keep-alive client of one origin, with as many connections as virtual users.
 */
export class HttpClient {
  /**
   * @param {string} origin - e.g. `http://127.0.0.1:3000`
   * @param {number} connections
   */
  constructor(origin, connections) {
    this.origin = origin;
    this.pool = new Pool(origin, {
      connections,
      pipelining: 1,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    /** Requests sent, for requests-per-operation. */
    this.requests = 0;
  }

  /**
   * Sends one request and reads the whole body.
   * @param {'GET' | 'POST'} method
   * @param {string} path - path and query on this origin
   * @param {{ headers?: Record<string, string>, form?: Record<string, string>, json?: unknown, jar?: CookieJar }} [options]
   * @returns {Promise<HttpResult>}
   */
  async request(method, path, options = {}) {
    /** @type {Record<string, string>} */
    const headers = { ...options.headers };
    let body;
    if (options.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    const cookie = options.jar?.header();
    if (cookie) headers.cookie = cookie;
    this.requests++;
    const response = await this.pool.request({ method, path, headers, body });
    const text = await response.body.text();
    options.jar?.store(response.headers['set-cookie']);
    return { status: response.statusCode, headers: response.headers, text };
  }

  close() {
    return this.pool.close();
  }
}

/** The cookies of one virtual user (one browser). Paths are ignored: each name is unique per server. */
export class CookieJar {
  /** @type {Map<string, string>} */
  #cookies = new Map();

  /** @param {string | string[] | undefined} setCookie */
  store(setCookie) {
    if (setCookie === undefined) return;
    for (const line of Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => {
        const [key = '', v = ''] = a.trim().split('=');
        if (key.toLowerCase() === 'max-age') return Number(v) <= 0;
        if (key.toLowerCase() === 'expires') return Date.parse(v) <= Date.now();
        return false;
      });
      if (expired || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  /** @returns {string} the `Cookie` header, empty when there is none */
  header() {
    let out = '';
    for (const [name, value] of this.#cookies) out += `${out === '' ? '' : '; '}${name}=${value}`;
    return out;
  }
}

/** @param {string} s */
function unescapeHtml(s) {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) =>
    e === 'amp' ? '&' : e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : "'",
  );
}

/**
 * @typedef {object} HtmlForm
 * @property {string} action - absolute URL
 * @property {Record<string, string>} fields - the named inputs with their values
 * @property {boolean} password - whether it asks for a password (a login form)
 */

/**
 * The first POST form of a page, as a browser would submit it.
 * @param {string} html
 * @param {string} pageUrl - to resolve a relative action
 * @returns {HtmlForm | undefined}
 */
export function readForm(html, pageUrl) {
  const start = html.search(/<form\b[^>]*method="post"/i);
  if (start === -1) return undefined;
  const end = html.indexOf('</form>', start);
  const form = html.slice(start, end === -1 ? undefined : end);
  const action = /action="([^"]*)"/i.exec(form)?.[1];
  /** @type {Record<string, string>} */
  const fields = {};
  let password = false;
  for (const [tag] of form.matchAll(/<input\b[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(tag)?.[1];
    const type = /\btype="([^"]*)"/i.exec(tag)?.[1];
    if (type === 'password') password = true;
    if (name !== undefined)
      fields[unescapeHtml(name)] = unescapeHtml(/\bvalue="([^"]*)"/i.exec(tag)?.[1] ?? '');
  }
  return { action: new URL(unescapeHtml(action ?? ''), pageUrl).href, fields, password };
}

/**
 * The `Location` of a redirect, resolved against the request URL.
 * @param {HttpResult} response
 * @param {string} requestUrl
 * @returns {URL}
 */
export function location(response, requestUrl) {
  const value = response.headers.location;
  if (typeof value !== 'string') throw new OpError(`${response.status} without a Location`);
  return new URL(value, requestUrl);
}

/**
 * Parses a JSON body, or fails the operation.
 * @param {HttpResult} response
 * @param {string} step
 * @returns {Record<string, unknown>}
 */
export function jsonBody(response, step) {
  try {
    return JSON.parse(response.text);
  } catch {
    throw new OpError(`${step}: body is not JSON (status ${response.status})`);
  }
}

/**
 * Fails the operation unless the status is the expected one.
 * @param {HttpResult} response
 * @param {number | readonly number[]} expected
 * @param {string} step
 */
export function expectStatus(response, expected, step) {
  const ok = typeof expected === 'number' ? response.status === expected : expected.includes(response.status);
  if (!ok) throw new OpError(`${step}: status ${response.status}: ${response.text.slice(0, 200)}`);
}
