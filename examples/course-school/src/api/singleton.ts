/**
 * Builds the two routes of a one-of-a-kind resource (the school, its appearance): read and
 * partial update. It always exists: the seed creates it.
 * @module
 */
import { z } from 'zod';
import type { NewRecord, RecordKind } from '../data/store.js';
import { ApiError, json } from './errors.js';
import { present } from './record-family.js';
import { type Access, type ApiRoute, defineRoute, type Family } from './route.js';
import { instant, patchOf } from './schemas.js';

/** A singleton's declaration. */
export interface SingletonOptions<S extends z.ZodObject> {
  readonly family: Family;
  readonly kind: RecordKind;
  readonly path: string;
  readonly name: string;
  readonly schema: S;
  readonly read: { readonly scope: string; readonly access: Access };
  readonly write: { readonly scope: string; readonly access: Access };
}

/** A singleton's routes and its seed record. */
export interface Singleton<S extends z.ZodObject> {
  readonly routes: readonly ApiRoute[];
  record(data: z.input<S>): NewRecord;
}

/** The routes of a singleton resource. */
export function singleton<S extends z.ZodObject>(o: SingletonOptions<S>): Singleton<S> {
  const id = o.kind;
  const output = z.object({ ...o.schema.shape, updated_at: instant });
  const show = (data: Record<string, unknown>, updatedAt: string) => ({ ...data, updated_at: updatedAt });
  const Name =
    o.name.charAt(0).toUpperCase() + o.name.slice(1).replace(/ (\w)/g, (_m, c: string) => c.toUpperCase());
  return {
    record(data) {
      return { kind: o.kind, id, isPublic: false, data: o.schema.parse(data) as Record<string, unknown> };
    },
    routes: [
      defineRoute({
        method: 'GET',
        path: o.path,
        family: o.family,
        operationId: `get${Name}`,
        summary: `Read the ${o.name}`,
        scope: o.read.scope,
        access: o.read.access,
        response: { status: 200, description: `The ${o.name}`, schema: output },
        async handler({ services }) {
          const record = await services.data.getRecord(o.kind, id);
          if (record === null) throw new ApiError('not_found', `the ${o.name} is not set up`);
          const shown = present(record);
          return json(200, show(record.data, String(shown.updated_at)));
        },
      }),
      defineRoute({
        method: 'PATCH',
        path: o.path,
        family: o.family,
        operationId: `update${Name}`,
        summary: `Update the ${o.name}`,
        description: 'Send only the fields to change.',
        scope: o.write.scope,
        access: o.write.access,
        body: {
          kind: 'json',
          schema: patchOf(o.schema),
        },
        response: { status: 200, description: `The updated ${o.name}`, schema: output },
        async handler({ body, services }) {
          const record = await services.data.getRecord(o.kind, id);
          if (record === null) throw new ApiError('not_found', `the ${o.name} is not set up`);
          const data = o.schema.parse({ ...record.data, ...(body as object) }) as Record<string, unknown>;
          const updated = await services.data.updateRecord(
            o.kind,
            id,
            { isPublic: false, data },
            services.now(),
          );
          if (updated === null) throw new ApiError('not_found', `the ${o.name} is not set up`);
          return json(200, show(updated.data, String(present(updated).updated_at)));
        },
      }),
    ],
  };
}
