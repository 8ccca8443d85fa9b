/**
 * Request bodies: read up to a limit (413 beyond it, without buffering the rest) and parsed only
 * when the media type says JSON (415 otherwise), so a handler never sees an unchecked body.
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from './response.js';

/** Largest JSON body the business API accepts. */
export const MAX_JSON_BYTES = 64 * 1024;

/** The media type without parameters, lower-cased. */
export function mediaTypeOf(req: IncomingMessage): string | undefined {
  const value = req.headers['content-type'];
  if (value === undefined) return undefined;
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
}

/**
 * Reads the whole body.
 * @throws HttpError `payload_too_large` past `limit` bytes (declared or received)
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

function tooLarge(limit: number): HttpError {
  // The rest of the body is not read, so the connection cannot be reused.
  return new HttpError('payload_too_large', `the request body is larger than ${limit} bytes`, {
    headers: { connection: 'close' },
  });
}

/**
 * Reads and parses a JSON body. An empty body is `undefined`, so schemas decide whether one is needed.
 * @throws HttpError `unsupported_media_type`, `payload_too_large`, or `invalid_request` for bad JSON
 */
export async function readJson(req: IncomingMessage, limit = MAX_JSON_BYTES): Promise<unknown> {
  const raw = await readBody(req, limit);
  if (raw.length === 0) return undefined;
  if (mediaTypeOf(req) !== 'application/json') {
    throw new HttpError('unsupported_media_type', 'send the body as application/json');
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpError('invalid_request', 'the body is not valid JSON');
  }
}

/**
 * Reads a form body (`application/x-www-form-urlencoded`); a field sent twice is refused, since
 * HTML forms here never repeat a name and a repeat means tampering.
 * @throws HttpError `unsupported_media_type`, `payload_too_large`, `invalid_request`
 */
export async function readForm(req: IncomingMessage, limit = 16 * 1024): Promise<Map<string, string>> {
  if (mediaTypeOf(req) !== 'application/x-www-form-urlencoded') {
    throw new HttpError('unsupported_media_type', 'send the form as application/x-www-form-urlencoded');
  }
  const raw = await readBody(req, limit);
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) {
    if (fields.has(name)) throw new HttpError('invalid_request', `the field ${name} was sent more than once`);
    fields.set(name, value);
  }
  return fields;
}
