/**
 * Builds the routes of a resource family stored as records: list and read under the family's
 * `:read` scope, create, update and delete under its `:write` scope. Visibility is decided here
 * once for every family:
 * - the school owner sees every record;
 * - records owned by their creator (orders, subscriptions) are visible to that user only;
 * - everyone else, anonymous or not, sees public records only (published courses, public pages).
 * A record the caller may not see answers 404, exactly like one that does not exist.
 * @module
 */
import { z } from 'zod';
import type { NewRecord, RecordKind, StoredRecord } from '../data/store.js';
import { ApiError, issuesOf, json, noContent } from './errors.js';

import {
  type Access,
  API_PREFIX,
  type ApiContext,
  type ApiRoute,
  type Caller,
  defineRoute,
  type Family,
} from './route.js';
import { newId, pageOf, pageQuery, patchOf, recordId, recordMeta, text } from './schemas.js';

/** A record family's declaration. */
export interface RecordFamilyOptions<S extends z.ZodObject> {
  readonly family: Family;
  readonly kind: RecordKind;
  /** Path of the collection under `/api/v1`, e.g. `/courses` or `/courses/{courseId}/lessons`. */
  readonly collectionPath: string;
  /** Name of the item's path parameter, e.g. `lessonId`. */
  readonly idParam: string;
  /** Prefix of generated ids, e.g. `les`. */
  readonly idPrefix: string;
  /** For summaries: `lesson`, `lessons`. */
  readonly singular: string;
  readonly plural: string;
  /** The fields of a record; the create body. Strict: unknown fields are errors. */
  readonly schema: S;
  readonly readScope: string;
  readonly readAccess: Access;
  /** Absent: the family is read-only (its area has no `:write` scope). */
  readonly write?: { readonly scope: string; readonly access: Access };
  /** Whether everyone (anonymous visitors, students) may read this record. */
  readonly isPublic: (data: z.output<S>) => boolean;
  /** Text `?q=` searches in; absent: no `q` parameter. */
  readonly searchText?: (data: z.output<S>) => string;
  /** Records belong to the user who created them (orders, subscriptions). */
  readonly ownedByCaller?: boolean;
  /**
   * The record this one belongs to. `path`: a path parameter of the collection (lessons of a
   * course); `query`: an optional list filter (comments of a post). Shown as `field`.
   */
  readonly parent?: {
    readonly kind: RecordKind;
    readonly param: string;
    readonly field: string;
    readonly in: 'path' | 'query';
  };
  /** Cross-record checks before a create or update (e.g. the plan exists); throw {@link ApiError}. */
  readonly validate?: (data: z.output<S>, context: FamilyContext) => Promise<void>;
  /** Checks before a delete (e.g. a section still has lessons); throw {@link ApiError}. */
  readonly beforeDelete?: (record: StoredRecord, context: FamilyContext) => Promise<void>;
}

/** What family hooks receive. */
export type FamilyContext = ApiContext<Readonly<Record<string, string>>, unknown, unknown>;

/** True when the caller runs the school. */
export const isOwner = (caller: Caller): boolean => caller.user?.role === 'owner';

/** Whether a caller may see a record under the family's rules. */
export function canSee(caller: Caller, record: StoredRecord, ownedByCaller: boolean): boolean {
  if (isOwner(caller)) return true;
  if (ownedByCaller) return caller.user !== null && record.ownerId === caller.user.id;
  return record.isPublic;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The JSON of a record: id, parent link, owner, fields, times. */
export function present(
  record: StoredRecord,
  parentField?: string,
  ownedByCaller = false,
): Record<string, unknown> {
  return {
    id: record.id,
    ...(parentField === undefined ? {} : { [parentField]: record.parentId }),
    ...(ownedByCaller ? { user_id: record.ownerId } : {}),
    ...record.data,
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
  };
}

/** A family's routes, and a way to build valid records of it (the seed uses it). */
export interface RecordFamily<S extends z.ZodObject> {
  readonly kind: RecordKind;
  readonly routes: readonly ApiRoute[];
  /**
   * A record of this family, validated like a create request.
   * @throws Error when `data` is not a valid record
   */
  record(id: string, data: z.input<S>, links?: { parentId?: string; ownerId?: string }): NewRecord;
}

/** The routes of a record family. */
export function recordFamily<S extends z.ZodObject>(options: RecordFamilyOptions<S>): RecordFamily<S> {
  const o = options;
  const ownedByCaller = o.ownedByCaller ?? false;
  const pathParent = o.parent?.in === 'path' ? o.parent : undefined;
  const queryParent = o.parent?.in === 'query' ? o.parent : undefined;
  const itemPath = `${o.collectionPath}/{${o.idParam}}`;
  const Name = o.singular.charAt(0).toUpperCase() + o.singular.slice(1);
  const opName = (verb: string, plural = false) =>
    `${verb}${(plural ? o.plural : o.singular).replace(/(^|[ _])(\w)/g, (_m, _s, c: string) => c.toUpperCase())}`;

  const collectionParams = z.strictObject(pathParent === undefined ? {} : { [pathParent.param]: recordId });
  const itemParams = z.strictObject({
    ...(pathParent === undefined ? {} : { [pathParent.param]: recordId }),
    [o.idParam]: recordId,
  });
  const output = z.object({
    ...recordMeta,
    ...(o.parent === undefined ? {} : { [o.parent.field]: recordId }),
    ...(ownedByCaller ? { user_id: recordId.describe('The user it belongs to') } : {}),
    ...o.schema.shape,
  });
  const listQuery = pageQuery.extend({
    ...(o.searchText === undefined
      ? {}
      : { q: text().trim().min(1).max(100).optional().describe(`Text to search ${o.plural} for`) }),
    ...(queryParent === undefined
      ? {}
      : {
          [queryParent.param]: recordId.optional().describe(`Only ${o.plural} of this ${queryParent.kind}`),
        }),
  });
  const patchSchema = patchOf(o.schema);

  /** The parent of a path-nested collection, if the caller may see it; 404 otherwise. */
  async function checkParent(context: FamilyContext): Promise<string | undefined> {
    if (pathParent === undefined) return undefined;
    const parentId = context.params[pathParent.param]!;
    const parent = await context.services.data.getRecord(pathParent.kind, parentId);
    if (parent === null || !canSee(context.caller, parent, false)) {
      throw new ApiError('not_found', `no ${pathParent.kind} ${parentId}`);
    }
    return parentId;
  }

  async function load(context: FamilyContext): Promise<StoredRecord> {
    const parentId = await checkParent(context);
    const id = context.params[o.idParam]!;
    const record = await context.services.data.getRecord(o.kind, id);
    if (
      record === null ||
      (parentId !== undefined && record.parentId !== parentId) ||
      !canSee(context.caller, record, ownedByCaller)
    ) {
      throw new ApiError('not_found', `no ${o.singular} ${id}`);
    }
    return record;
  }

  const itemUrl = (context: FamilyContext, id: string) => {
    let path = `${API_PREFIX}${o.collectionPath}/${encodeURIComponent(id)}`;
    for (const [name, value] of Object.entries(context.params)) path = path.replace(`{${name}}`, value);
    return `${context.services.issuer}${path}`;
  };

  const stored = (data: z.output<S>) => ({
    isPublic: o.isPublic(data),
    data: data as Record<string, unknown>,
    ...(o.searchText === undefined ? {} : { searchText: o.searchText(data) }),
  });

  const routes: ApiRoute[] = [
    defineRoute({
      method: 'GET',
      path: o.collectionPath,
      family: o.family,
      operationId: opName('list', true),
      summary: `List ${o.plural}`,
      scope: o.readScope,
      access: o.readAccess,
      params: collectionParams,
      query: listQuery,
      response: { status: 200, description: `A page of ${o.plural}`, schema: pageOf(output) },
      async handler(context) {
        const parentId = await checkParent(context as FamilyContext);
        const q = context.query as Record<string, unknown>;
        const owner = isOwner(context.caller);
        const page = await context.services.data.listRecords(o.kind, {
          limit: q.limit as number,
          ...(typeof q.cursor === 'string' ? { after: q.cursor } : {}),
          ...(typeof q.q === 'string' ? { search: q.q } : {}),
          ...(parentId !== undefined ? { parentId } : {}),
          ...(queryParent !== undefined && typeof q[queryParent.param] === 'string'
            ? { parentId: q[queryParent.param] as string }
            : {}),
          ...(owner
            ? {}
            : ownedByCaller
              ? { ownerId: context.caller.user?.id ?? '-' }
              : { publicOnly: true }),
        });
        return json(200, {
          data: page.items.map((r) => present(r, o.parent?.field, ownedByCaller)),
          next_cursor: page.next,
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: itemPath,
      family: o.family,
      operationId: opName('get'),
      summary: `Read a ${o.singular}`,
      scope: o.readScope,
      access: o.readAccess,
      params: itemParams,
      response: { status: 200, description: `The ${o.singular}`, schema: output },
      async handler(context) {
        return json(200, present(await load(context as FamilyContext), o.parent?.field, ownedByCaller));
      },
    }),
  ];

  const family: RecordFamily<S> = {
    kind: o.kind,
    routes,
    record(id, input, links = {}) {
      const parsed = o.schema.safeParse(input);
      if (!parsed.success) throw new Error(`invalid ${o.singular} ${id}: ${parsed.error.message}`);
      return {
        kind: o.kind,
        id,
        parentId: links.parentId ?? null,
        ownerId: links.ownerId ?? null,
        ...stored(parsed.data),
      };
    },
  };
  const write = o.write;
  if (write === undefined) return family;

  routes.push(
    defineRoute({
      method: 'POST',
      path: o.collectionPath,
      family: o.family,
      operationId: opName('create'),
      summary: `Create a ${o.singular}`,
      scope: write.scope,
      access: write.access,
      params: collectionParams,
      body: { kind: 'json', schema: o.schema },
      response: { status: 201, description: `${Name} created; \`Location\` is its URL`, schema: output },
      async handler(context): Promise<Response> {
        const ctx = context as FamilyContext;
        const parentId = await checkParent(ctx);
        const data = context.body as z.output<S>;
        await o.validate?.(data, ctx);
        const record: NewRecord = {
          kind: o.kind,
          id: newId(o.idPrefix),
          parentId: parentId ?? null,
          ownerId: ownedByCaller ? (context.caller.user?.id ?? null) : null,
          ...stored(data),
        };
        const now = context.services.now();
        await context.services.data.insertRecord(record, now);
        const created = await context.services.data.getRecord(o.kind, record.id);
        if (created === null) throw new Error('a record vanished right after its insert');
        return json(201, present(created, o.parent?.field, ownedByCaller), {
          location: itemUrl(ctx, record.id),
        });
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: itemPath,
      family: o.family,
      operationId: opName('update'),
      summary: `Update a ${o.singular}`,
      description: 'Send only the fields to change; the result must still be a valid record.',
      scope: write.scope,
      access: write.access,
      params: itemParams,
      body: { kind: 'json', schema: patchSchema },
      response: { status: 200, description: `The updated ${o.singular}`, schema: output },
      async handler(context) {
        const ctx = context as FamilyContext;
        const existing = await load(ctx);
        const merged = o.schema.safeParse({ ...existing.data, ...(context.body as object) });
        if (!merged.success) {
          const issues = issuesOf('body', merged.error);
          throw new ApiError(
            'invalid_request',
            `the ${o.singular} would be invalid: ${issues[0]!.path} ${issues[0]!.message}`,
            { issues },
          );
        }
        await o.validate?.(merged.data, ctx);
        const updated = await context.services.data.updateRecord(
          o.kind,
          existing.id,
          stored(merged.data),
          context.services.now(),
        );
        if (updated === null) throw new ApiError('not_found', `no ${o.singular} ${existing.id}`);
        return json(200, present(updated, o.parent?.field, ownedByCaller));
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: itemPath,
      family: o.family,
      operationId: opName('delete'),
      summary: `Delete a ${o.singular}`,
      scope: write.scope,
      access: write.access,
      params: itemParams,
      response: { status: 204, description: `${Name} deleted` },
      async handler(context) {
        const ctx = context as FamilyContext;
        const existing = await load(ctx);
        await o.beforeDelete?.(existing, ctx);
        await context.services.data.deleteRecord(o.kind, existing.id);
        return noContent();
      },
    }),
  );
  return family;
}
