/**
 * Building blocks of the option schema (`options.ts`): URLs, paths, durations, function and object
 * options, and the messages of failed bounds, which read each bound from the issue so that every
 * bound is written once, in the schema.
 * @module
 */
import { z } from 'zod';

/** The message of a failed bound, read from the issue so that each bound is written once. */
function boundMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'too_big' && issue.code !== 'too_small') return undefined;
  const limit = Number(issue.code === 'too_big' ? issue.maximum : issue.minimum);
  const unit = issue.origin === 'string' ? 'character' : issue.origin === 'array' ? 'entry' : undefined;
  const what = unit === undefined ? '' : ` ${limit === 1 ? unit : `${unit.replace(/y$/, 'ie')}s`}`;
  const verb = issue.origin === 'array' ? 'must have' : 'must be';
  if (issue.inclusive === false) {
    return `${verb} ${issue.code === 'too_big' ? 'less' : 'more'} than ${limit}${what}`;
  }
  return `${verb} ${issue.code === 'too_big' ? 'at most' : 'at least'} ${limit}${what}`;
}

/** Messages of every issue without its own: bounds stated with their limit, absent options as required. */
export const optionMessages: z.core.$ZodErrorMap = (issue) => {
  const bound = boundMessage(issue);
  if (bound !== undefined) return bound;
  if (issue.code === 'invalid_type') {
    if (issue.input === undefined) return 'is required';
    const article = /^[aeiou]/.test(issue.expected) ? 'an' : 'a';
    return `must be ${issue.expected === 'int' ? 'an integer' : `${article} ${issue.expected}`}`;
  }
  if (issue.code === 'invalid_value') {
    return `must be ${issue.values.length === 1 ? '' : 'one of '}${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  if (issue.code === 'unrecognized_keys') return `unknown option(s): ${issue.keys.join(', ')}`;
  return undefined;
};

/** A bound whose message also says why it is there: `must be at most 600 (RFC 6749 §4.1.2)`. */
export const because = (why: string) => ({
  error: (issue: z.core.$ZodRawIssue) => `${boundMessage(issue) ?? 'is out of range'} (${why})`,
});

const isFunction = (value: unknown) => typeof value === 'function';

/** A function-valued option, checked for being a function; its signature comes from `T`. */
export const fn = <T>(what: string) => z.custom<T>(isFunction, { error: `must be a function (${what})` });

/** The methods of `methods` that `value` lacks (all of them when it is not an object). */
export function missingMethods(value: unknown, methods: readonly string[]): readonly string[] {
  if (typeof value !== 'object' || value === null) return methods;
  return methods.filter((method) => typeof (value as Record<string, unknown>)[method] !== 'function');
}

/** An object option implementing `methods`, checked by duck typing; the error names what is missing. */
export const implementing = <T>(name: string, methods: readonly string[]) =>
  z.custom<T>((value) => missingMethods(value, methods).length === 0, {
    error: (issue) => `must implement ${name} (missing ${missingMethods(issue.input, methods).join(', ')})`,
  });

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An absolute URL: https, or http on a loopback host; no fragment. */
export function webUrl(what: string, { allowQuery }: { allowQuery: boolean }) {
  return z.string().superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `${what} must be an absolute URL` });
      return;
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
      ctx.addIssue({ code: 'custom', message: `${what} must use https (http is accepted only on loopback)` });
    }
    if (value.includes('#')) ctx.addIssue({ code: 'custom', message: `${what} must not have a fragment` });
    if (!allowQuery && value.includes('?'))
      ctx.addIssue({ code: 'custom', message: `${what} must not have a query` });
  });
}

/** How URL parsing writes the origin and path of `value`, when `value` writes them otherwise. */
export function unlessNormalForm(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined; // reported as not a URL
  }
  const written = value.split(/[?#]/, 1)[0];
  if (written === url.origin + url.pathname || (url.pathname === '/' && written === url.origin))
    return undefined;
  return url.pathname === '/' ? url.origin : url.origin + url.pathname;
}

/** An endpoint path. */
export const path = z
  .string()
  .regex(/^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/, 'must be an absolute path such as /oauth/token');
/** A duration in whole seconds, 0 allowed. */
export const seconds = z.number().int().nonnegative();
/** A duration in whole seconds, more than 0. */
export const positiveSeconds = z.number().int().positive();
/** The algorithms this library signs with. */
export const signingAlg = z.enum(['RS256', 'ES256']);
/** A read-only list (callers may pass `readonly` arrays), of at least `min` entries. */
export const list = <T extends z.ZodType>(item: T, min = 0) => z.array(item).min(min).readonly();
