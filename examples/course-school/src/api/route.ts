/**
 * The route table's entry: everything about one business operation in one place (method, path,
 * scope, who may call it, schemas, handler). `api/app.ts` turns each into a `@hono/zod-openapi`
 * route, so the guard, Hono's request validation and `/openapi.json` read this one declaration
 * and cannot disagree.
 * @module
 */
import type { z } from 'zod';
import type { Principal } from '../auth/bearer-guard.js';
import type { DataStore, UserRecord } from '../data/store.js';

/** The resource families of spec §5.4, one tag each in the OpenAPI document. */
export const FAMILIES = {
  courses: 'Courses of the school: the public catalog and its administration.',
  curriculum: 'Sections and lessons of a course.',
  students: 'Learners enrolled in the school.',
  members: 'The school team: administrators, editors and support staff.',
  analytics: 'Aggregated figures about the school.',
  orders: 'Purchases. The owner sees all; a student sees their own.',
  school: 'The school itself: name, contact, currency.',
  appearance: "The school's theme.",
  events: 'Live sessions and meetups.',
  membership_plans: 'Membership plans offered by the school (public ones are in the catalog).',
  coupons: 'Discount codes.',
  posts: 'Articles and announcements.',
  subscriptions: 'Subscriptions to membership plans. A student sees and manages their own.',
  digital_products: 'Downloadable products: e-books, templates.',
  comments: 'Comments on posts.',
  lecturers: 'People who teach the courses.',
  storage: 'Uploaded files.',
  forms: 'Forms and their submissions.',
  pages: 'Site pages (public ones are in the catalog).',
  account: 'The signed-in user.',
} as const;

/** A resource family. */
export type Family = keyof typeof FAMILIES;

/**
 * Who may call an operation, beyond the scope the token must carry:
 * - `public`: anyone; without a token the caller is anonymous (and sees public data only)
 * - `user`: a token is required (401 challenge without one)
 * - `owner`: a token of the school owner is required (403 for other users)
 */
export type Access = 'public' | 'user' | 'owner';

/** The caller of an operation, resolved by the guard. */
export interface Caller {
  readonly principal: Principal;
  /** The token's user; null when anonymous. */
  readonly user: UserRecord | null;
}

/** What handlers may use. */
export interface ApiServices {
  readonly data: DataStore;
  readonly issuer: string;
  now(): number;
}

/** Inputs of a handler, validated. */
export interface ApiContext<P, Q, B> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly caller: Caller;
  readonly services: ApiServices;
  /** The request's raw body for `binary` routes. */
  readonly raw: { readonly bytes: Uint8Array; readonly mediaType: string } | undefined;
}

/** How an operation takes a body. */
export type BodySpec<B extends z.ZodType> =
  | { readonly kind: 'json'; readonly schema: B }
  | { readonly kind: 'binary'; readonly maxBytes: number; readonly description: string };

/** An operation as declared. */
export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI path under `/api/v1`, e.g. `/courses/{courseId}`. */
  readonly path: string;
  readonly family: Family;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  /** The one scope the token must carry. */
  readonly scope: string;
  readonly access: Access;
  readonly params?: P;
  readonly query?: Q;
  readonly body?: BodySpec<B>;
  readonly response: {
    readonly status: 200 | 201 | 204;
    readonly description: string;
    /** The JSON body's schema; absent for 204. */
    readonly schema?: z.ZodType;
    /** The body is a file of any media type (a download). */
    readonly binary?: true;
  };
  readonly handler: (context: ApiContext<z.output<P>, z.output<Q>, z.output<B>>) => Promise<Response>;
}

/** An operation with its types erased, as the table holds it. */
export type ApiRoute = RouteSpec<z.ZodType, z.ZodType, z.ZodType>;

/** The prefix of every business route. */
export const API_PREFIX = '/api/v1';

/**
 * Declares an operation, keeping the handler's types tied to its schemas. The table erases them;
 * that is sound because Hono validates the inputs with these very schemas before the handler runs.
 */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): ApiRoute {
  return spec as unknown as ApiRoute;
}
