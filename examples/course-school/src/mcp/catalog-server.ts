/**
 * The MCP server of `/mcp`: anonymous catalog reads (spec §1). Tools search courses, read one
 * with its curriculum outline, and list membership plans; the same data is offered as resources.
 * It reads the catalog through `api/catalog.ts`, like the REST routes, so both show the same thing.
 * Arguments are checked like the API's fields (`text()`: no NUL, unpaired surrogate or
 * non-character; `/mcp` refuses those in any string before a tool runs). A failed read is logged
 * and answered with a generic message: the SDK sends a thrown error's message to the caller, and a
 * database driver's message may quote the database, even the statement.
 * @module
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { courseOutline, publicPlans, publishedCourse, searchPublishedCourses } from '../api/catalog.js';
import { logFailure } from '../api/errors.js';
import { text } from '../api/schemas.js';
import type { DataStore, StoredRecord } from '../data/store.js';
import { buildPricingMd, formatPrice } from '../docs/pricing-md.js';

/** What the MCP server reads. */
export interface CatalogServerDeps {
  readonly data: DataStore;
  readonly issuer: string;
  readonly title: string;
  readonly version: string;
}

const courseUri = (id: string) => `course-school://courses/${id}`;

function courseSummary(c: StoredRecord, issuer: string) {
  return {
    id: c.id,
    title: String(c.data.title),
    summary: String(c.data.summary),
    level: String(c.data.level),
    price: formatPrice(Number(c.data.price_cents), String(c.data.currency)),
    url: `${issuer}/api/v1/courses/${c.id}`,
  };
}

function result(structured: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(structured, null, 2) }],
    structuredContent: structured,
  };
}

async function courseDetail(deps: CatalogServerDeps, id: string) {
  const course = await publishedCourse(deps.data, id);
  if (course === null) return null;
  return {
    ...courseSummary(course, deps.issuer),
    description: String(course.data.description),
    outline: await courseOutline(deps.data, course.id),
  };
}

/**
 * Runs one read of the catalog for a tool or a resource. A failure is logged once (one JSON line,
 * never the statement or its parameters) under a request id, and the caller gets only that id in a
 * generic message, never the error's own text.
 *
 * @param what - the tool or resource, for the log line
 * @param read - the read
 */
async function reading<T>(what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    const requestId = logFailure('POST', `/mcp ${what}`, error);
    throw new Error(
      `the catalog could not be read right now; try again shortly (request id ${requestId ?? 'none'})`,
    );
  }
}

type McpSdk = typeof import('@modelcontextprotocol/sdk/server/mcp.js');
let sdk: Promise<McpSdk> | undefined;

/**
 * The MCP SDK, imported on the first `/mcp` request rather than at start: it is about 20 MB of
 * resident memory and a tenth of the start-up time that a server nobody asks over MCP never needs.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  sdk ??= import('@modelcontextprotocol/sdk/server/mcp.js').catch((error: unknown) => {
    sdk = undefined;
    throw error;
  });
  return sdk;
}

/** Builds a server instance (one per request: the transport is stateless). */
export async function createCatalogServer(deps: CatalogServerDeps): Promise<McpServer> {
  const { McpServer, ResourceTemplate } = await loadMcpSdk();
  const server = new McpServer(
    { name: 'course-school-catalog', title: `${deps.title} catalog`, version: deps.version },
    {
      instructions:
        'Read-only catalog of an online course school: published courses with their curriculum outline, and membership plans. No sign-in needed.',
    },
  );

  server.registerTool(
    'search_courses',
    {
      title: 'Search courses',
      description:
        'Search the published courses by words of their title or summary. Without a query, lists the catalog.',
      inputSchema: {
        query: text().trim().max(100).optional().describe('Words to look for, e.g. "compiler"'),
        limit: z.number().int().min(1).max(50).optional().describe('At most this many courses (default 20)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ query, limit }) => {
      const courses = await reading('search_courses', () =>
        searchPublishedCourses(deps.data, query, limit ?? 20),
      );
      return result({ courses: courses.map((c) => courseSummary(c, deps.issuer)) });
    },
  );

  server.registerTool(
    'get_course',
    {
      title: 'Read a course',
      description:
        'A published course with its description and curriculum outline (sections and lesson titles).',
      inputSchema: {
        course_id: text().min(1).max(100).describe('The id from search_courses, e.g. crs_compilers'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ course_id }) => {
      const course = await reading('get_course', () => courseDetail(deps, course_id));
      if (course === null) {
        return {
          isError: true,
          content: [{ type: 'text', text: `No published course ${course_id}. Use search_courses.` }],
        };
      }
      return result(course);
    },
  );

  server.registerTool(
    'list_membership_plans',
    {
      title: 'List membership plans',
      description: 'The membership plans on sale, with prices and features.',
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      const plans = await reading('list_membership_plans', () => publicPlans(deps.data));
      return result({
        plans: plans.map((p) => ({
          id: p.id,
          name: String(p.data.name),
          description: String(p.data.description),
          price: formatPrice(Number(p.data.price_cents), String(p.data.currency)),
          interval: String(p.data.interval),
          features: p.data.features as string[],
        })),
      });
    },
  );

  server.registerResource(
    'course',
    new ResourceTemplate(courseUri('{courseId}'), {
      list: async () => ({
        resources: (
          await reading('resources/list', () => searchPublishedCourses(deps.data, undefined, 100))
        ).map((c) => ({
          uri: courseUri(c.id),
          name: String(c.data.title),
          mimeType: 'application/json',
        })),
      }),
    }),
    { title: 'Course', description: 'A published course with its outline', mimeType: 'application/json' },
    async (uri, variables) => {
      const id = String(variables.courseId);
      const course = await reading('resources/read', () => courseDetail(deps, id));
      if (course === null) throw new Error(`no published course ${id}`);
      return {
        contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(course, null, 2) }],
      };
    },
  );

  server.registerResource(
    'pricing',
    'course-school://pricing',
    { title: 'Pricing', description: 'Plans, courses and products with prices', mimeType: 'text/markdown' },
    async (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'text/markdown',
          text: await reading('resources/read', () => buildPricingMd(deps.data, deps.title, deps.issuer)),
        },
      ],
    }),
  );

  return server;
}
