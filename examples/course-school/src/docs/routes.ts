/**
 * The documents of this origin (`/openapi.json`, `/auth.md`, `/llms.txt`, `/pricing.md`), each a
 * route declared once: it serves the document and describes itself in `/openapi.json`. Public
 * documents may be cached briefly and read cross-origin; `/pricing.md` follows the live catalog.
 * @module
 */
import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import { z } from 'zod';
import type { DataStore } from '../data/store.js';
import { buildPricingMd } from './pricing-md.js';

/** Cached public documents: safe to cache briefly and to read cross-origin. */
const PUBLIC_DOC = { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' } as const;

/** What the documents are made of. */
export interface DocumentsDeps {
  /** The OpenAPI document, serialised; known once every route is registered. */
  openapi(): string;
  readonly authMd: string;
  readonly llmsTxt: string;
  readonly data: DataStore;
  readonly title: string;
  readonly issuer: string;
}

/** A document's route; typed as any route, so its handler returns a plain `Response` with our headers. */
const document = (path: string, operationId: string, summary: string, type: string): RouteConfig =>
  createRoute({
    method: 'get',
    path,
    operationId,
    tags: ['documents'],
    summary,
    responses: {
      200: {
        description: summary,
        content: { [type]: { schema: type === 'application/json' ? z.looseObject({}) : z.string() } },
      },
    },
  });

/** The documents' routes. */
export function createDocumentsApp(deps: DocumentsDeps): OpenAPIHono {
  const app = new OpenAPIHono();
  const text = (body: string, type: string, headers: Readonly<Record<string, string>> = PUBLIC_DOC) =>
    new Response(body, { status: 200, headers: { 'content-type': `${type}; charset=utf-8`, ...headers } });

  app.openapi(
    document('/openapi.json', 'getOpenapi', 'This document (OpenAPI 3.0.3)', 'application/json'),
    () => text(deps.openapi(), 'application/json'),
  );
  app.openapi(
    document('/auth.md', 'getAuthMd', 'Authentication walkthrough (Markdown)', 'text/markdown'),
    () => text(deps.authMd, 'text/markdown'),
  );
  app.openapi(document('/llms.txt', 'getLlmsTxt', 'Index of the site for AI agents', 'text/plain'), () =>
    text(deps.llmsTxt, 'text/plain'),
  );
  app.openapi(
    document('/pricing.md', 'getPricingMd', 'What the school sells, with prices (Markdown)', 'text/markdown'),
    async () =>
      text(await buildPricingMd(deps.data, deps.title, deps.issuer), 'text/markdown', {
        'cache-control': 'no-cache',
      }),
  );
  return app;
}
