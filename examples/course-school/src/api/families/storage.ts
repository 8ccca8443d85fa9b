/**
 * Storage: file uploads (`storage:write`, the owner). The area has only a write scope, so managing
 * uploads (list, read, download, delete) needs it too. Files are kept in the database, base64 in
 * the record, which suits the small assets of a reference server (1 MiB each).
 * @module
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { DataStore } from '../../data/store.js';
import { ApiError, json, noContent } from '../errors.js';
import { present } from '../record-family.js';
import { API_PREFIX, type ApiRoute, defineRoute } from '../route.js';
import { instant, newId, pageOf, pageQuery, recordId, text } from '../schemas.js';

/** Largest upload. */
export const MAX_UPLOAD_BYTES = 1024 * 1024;

const access = { family: 'storage', scope: 'storage:write', access: 'owner' } as const;
const objectParams = z.strictObject({ objectId: recordId });
const meta = z.object({
  id: recordId,
  name: z.string(),
  content_type: z.string(),
  size_bytes: z.number().int(),
  sha256: z.string().describe('Base64url SHA-256 of the content'),
  content_url: z.string().describe('Where to download the content'),
  user_id: z.string().describe('Who uploaded it'),
  created_at: instant,
  updated_at: instant,
});

function show(record: Parameters<typeof present>[0], issuer: string): Record<string, unknown> {
  const { content_base64: _content, ...shown } = present(record, undefined, true);
  return { ...shown, content_url: `${issuer}${API_PREFIX}/storage/objects/${record.id}/content` };
}

async function load(services: { data: DataStore }, id: string) {
  const record = await services.data.getRecord('object', id);
  if (record === null) throw new ApiError('not_found', `no object ${id}`);
  return record;
}

/** The storage routes. */
export const storageRoutes: ApiRoute[] = [
  defineRoute({
    ...access,
    method: 'POST',
    path: '/storage/objects',
    operationId: 'uploadObject',
    summary: 'Upload a file',
    description: 'The request body is the file; its Content-Type is kept. At most 1 MiB.',
    query: z.strictObject({
      name: text()
        .regex(/^[\w.-]{1,100}$/, 'must be a plain file name')
        .describe('File name, e.g. logo.png'),
    }),
    body: { kind: 'binary', maxBytes: MAX_UPLOAD_BYTES, description: 'The file content' },
    response: { status: 201, description: 'Uploaded; `Location` is its URL', schema: meta },
    async handler({ query, raw, caller, services }): Promise<Response> {
      if (raw === undefined) throw new ApiError('invalid_request', 'the file content is required');
      if (!/^[a-z]+\/[a-z0-9.+-]+$/.test(raw.mediaType)) {
        throw new ApiError('unsupported_media_type', 'send the file with its media type as Content-Type');
      }
      const bytes = Buffer.from(raw.bytes);
      const id = newId('obj');
      await services.data.insertRecord(
        {
          kind: 'object',
          id,
          ownerId: caller.user?.id ?? null,
          isPublic: false,
          searchText: query.name,
          data: {
            name: query.name,
            content_type: raw.mediaType,
            size_bytes: bytes.length,
            sha256: createHash('sha256').update(bytes).digest('base64url'),
            content_base64: bytes.toString('base64'),
          },
        },
        services.now(),
      );
      const record = await load(services, id);
      return json(201, show(record, services.issuer), {
        location: `${services.issuer}${API_PREFIX}/storage/objects/${id}`,
      });
    },
  }),
  defineRoute({
    ...access,
    method: 'GET',
    path: '/storage/objects',
    operationId: 'listObjects',
    summary: 'List uploaded files',
    query: pageQuery,
    response: { status: 200, description: 'A page of files', schema: pageOf(meta) },
    async handler({ query, services }) {
      const page = await services.data.listRecords('object', {
        limit: query.limit,
        ...(query.cursor === undefined ? {} : { after: query.cursor }),
      });
      return json(200, { data: page.items.map((r) => show(r, services.issuer)), next_cursor: page.next });
    },
  }),
  defineRoute({
    ...access,
    method: 'GET',
    path: '/storage/objects/{objectId}',
    operationId: 'getObject',
    summary: 'Read the metadata of a file',
    params: objectParams,
    response: { status: 200, description: 'The file metadata', schema: meta },
    async handler({ params, services }) {
      return json(200, show(await load(services, params.objectId), services.issuer));
    },
  }),
  defineRoute({
    ...access,
    method: 'GET',
    path: '/storage/objects/{objectId}/content',
    operationId: 'downloadObject',
    summary: 'Download a file',
    params: objectParams,
    response: { status: 200, description: 'The file, with its Content-Type', binary: true },
    async handler({ params, services }) {
      const record = await load(services, params.objectId);
      return new Response(Buffer.from(String(record.data.content_base64), 'base64'), {
        status: 200,
        headers: {
          'content-type': String(record.data.content_type),
          // Uploaded content is never rendered as a page of this origin.
          'content-disposition': `attachment; filename="${String(record.data.name)}"`,
          'x-content-type-options': 'nosniff',
          'content-security-policy': "sandbox; default-src 'none'",
          'cache-control': 'no-store',
        },
      });
    },
  }),
  defineRoute({
    ...access,
    method: 'DELETE',
    path: '/storage/objects/{objectId}',
    operationId: 'deleteObject',
    summary: 'Delete a file',
    params: objectParams,
    response: { status: 204, description: 'Deleted' },
    async handler({ params, services }) {
      await load(services, params.objectId);
      await services.data.deleteRecord('object', params.objectId);
      return noContent();
    },
  }),
];
