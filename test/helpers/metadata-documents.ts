/**
 * A scripted metadata document fetcher for resolver tests: serves whatever the test sets for a
 * client_id and counts the fetches.
 */
import { expect } from 'vitest';
import { ClientMetadataDocumentError } from '../../src/cimd/errors.js';
import type { MetadataFetcher, MetadataFetchResponse } from '../../src/cimd/fetcher.js';

export interface ScriptedResponse {
  status?: number;
  contentType?: string;
  cacheControl?: string;
  /** A string body, or an object serialised as JSON. */
  body?: string | Record<string, unknown> | unknown[];
}

export interface ScriptedFetcher {
  readonly fetcher: MetadataFetcher;
  /** Fetches made so far, by client_id. */
  readonly fetches: string[];
  /** Sets what `clientId` answers from now on. */
  serve(clientId: string, response: ScriptedResponse): void;
}

export const CLIENT_ID = 'https://client.example/oauth/client.json';

/** A minimal valid document for `clientId`, with `extra` members merged in. */
export function validDocument(
  clientId = CLIENT_ID,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    client_id: clientId,
    client_name: 'Example Agent',
    redirect_uris: ['http://127.0.0.1/callback'],
    token_endpoint_auth_method: 'none',
    ...extra,
  };
}

export function scriptedFetcher(): ScriptedFetcher {
  const scripts = new Map<string, ScriptedResponse>();
  const fetches: string[] = [];
  const fetcher: MetadataFetcher = async ({ target }): Promise<MetadataFetchResponse> => {
    fetches.push(target.clientId);
    const script = scripts.get(target.clientId) ?? { status: 404, body: '' };
    const body = script.body ?? '';
    return {
      status: script.status ?? 200,
      contentType: script.contentType ?? 'application/json',
      cacheControl: script.cacheControl,
      body: new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)),
    };
  };
  return { fetcher, fetches, serve: (clientId, response) => scripts.set(clientId, response) };
}

/** Awaits a resolution that must fail with a {@link ClientMetadataDocumentError}, and returns it. */
export async function refusal(promise: Promise<unknown>): Promise<ClientMetadataDocumentError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClientMetadataDocumentError);
  return error as ClientMetadataDocumentError;
}
