/**
 * Bookkeeping after a token response is settled: a dynamically registered client that has
 * completed a token request is no longer an abandoned registration, so its expiry is cleared.
 * Best effort: it runs after the commit point, so a failure is logged and retried on the client's
 * next token request, never answered.
 * @module
 */
import type { ServerContext } from '../server-context.js';
import type { ClientRecord } from '../storage/types.js';

/** Clears `client.expiresAt` in storage, if set; never throws. */
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
