/**
 * Bookkeeping after a token response is settled: a dynamically registered client that has
 * completed a token request is no longer an abandoned registration, so its expiry is cleared.
 * Best effort: it runs after the commit point, so a failure is logged and retried on the client's
 * next token request, never answered.
 * @module
 */
import type { ServerContext } from '../server-context.js';
import type { ClientRecord } from '../storage/types.js';

/**
 * Clears `client.expiresAt` in storage, if set; never throws (a failure is logged as a warning).
 *
 * @param ctx - the server's shared state
 * @param client - the client that just completed a token request
 * @see RFC 7591 §3.2.1 (the registered client)
 */
export async function markClientUsed(ctx: ServerContext, client: ClientRecord): Promise<void> {
  if (client.expiresAt === undefined) return;
  try {
    await ctx.config.storage.clients.clearExpiry(client.clientId);
    // The cached record still carries the expiry: read the client afresh next time.
    ctx.forgetClient(client.clientId);
  } catch (error) {
    ctx.config.runtime.logger.warn(
      'clearing the expiry of a used client failed; retried on its next token request',
      { clientId: client.clientId, error: String(error) },
    );
  }
}
