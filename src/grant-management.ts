/**
 * Grant management for a host's account page: the apps a user authorized, and revoking one (its
 * tokens and the remembered consent with it).
 * @module
 */
import type { ServerContext } from './server-context.js';

/**
 * One entry of {@link AuthorizationServer.listGrants}: an app the user authorized.
 *
 * @example
 * ```ts
 * import type { AuthorizationServer, AuthorizedApp } from 'portcullis';
 *
 * declare const oauth: AuthorizationServer;
 * const apps: AuthorizedApp[] = await oauth.listGrants('user-42');
 * for (const app of apps) console.log(app.clientName ?? app.clientId, app.scope.join(' '));
 * ```
 * @see RFC 7009 §2.1 (revoking a grant revokes its tokens)
 * @group Authorization Server
 */
export interface AuthorizedApp {
  /** Pass it to {@link AuthorizationServer.revokeGrant}. */
  readonly grantId: string;
  /** The client the user authorized. */
  readonly clientId: string;
  /** Its registered `client_name`, if any. */
  readonly clientName: string | undefined;
  /** The scopes granted. */
  readonly scope: readonly string[];
  /** The resources (RFC 8707) its tokens are for. */
  readonly resources: readonly string[];
  /** Epoch seconds. */
  readonly createdAt: number;
}

/** The active grants of `userId`, newest first, each with its client's name. */
export async function listGrants(ctx: ServerContext, userId: string): Promise<AuthorizedApp[]> {
  const grants = await ctx.config.storage.grants.listByUser(userId, ctx.now());
  return Promise.all(
    grants.map(async (g) => ({
      grantId: g.grantId,
      clientId: g.clientId,
      // A metadata-document client whose document cannot be fetched right now is listed without a name.
      clientName: (await ctx.getClient(g.clientId).catch(() => null))?.metadata.client_name,
      scope: g.scope,
      resources: g.resources,
      createdAt: g.createdAt,
    })),
  );
}

/**
 * Revokes an active grant (and so its tokens) and forgets the consent it came from; with `userId`,
 * only that user's grant. Emits `grant.revoked` with reason `user`.
 */
export async function revokeGrant(
  ctx: ServerContext,
  grantId: string,
  options: { userId?: string },
): Promise<boolean> {
  const storage = ctx.config.storage;
  const grant = await storage.grants.get(grantId);
  if (grant === null || grant.revokedAt !== undefined) return false;
  if (options.userId !== undefined && grant.userId !== options.userId) return false;
  const revoked = await storage.grants.revoke(grantId, ctx.now());
  await storage.consents.delete(grant.userId, grant.clientId);
  if (revoked) ctx.emit({ type: 'grant.revoked', grantId, reason: 'user' });
  return revoked;
}
