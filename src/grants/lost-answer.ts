/**
 * A grant's commit point whose answer may be lost after it committed: the database committed the
 * step, then the connection broke on the way back (a failover, a restart, a network cut), so the
 * call throws although everything is stored. Without a check, the client gets a `5xx` for tokens
 * that exist, and its retry presents a code or refresh token that now reads as used: a replay,
 * which revokes the grant (RFC 6749 §4.1.2), or a reuse (RFC 9700 §4.14.2).
 *
 * The request that ran the step holds the proof: the access token it minted, which no other
 * request knows and which the step stores with everything else, all or nothing. So when the step
 * throws, the grant asks the storage once whether that access token is there. If it is, the step
 * committed, and the request is answered with the tokens it minted, as if the answer had arrived.
 * If it is not (or the storage cannot say), the step's error stands: nothing was stored, the code
 * or refresh token is still unused, and the client's retry after the `503` redeems it.
 * @module
 */
import { describeFailure } from '../core/errors.js';
import type { ServerContext } from '../server-context.js';

/**
 * Runs `step`; when it throws, answers `committed` if the access token the step was storing reads
 * as stored (the step committed and only its answer was lost), and rethrows otherwise.
 *
 * @param ctx - the server's shared state
 * @param step - the atomic step (`codes.redeem`, `grants.rotateRefreshToken`)
 * @param accessTokenHash - the hash of the access token this request minted and the step stores
 * @param committed - what the step answers when it commits
 * @returns the step's answer, or `committed`
 * @throws the step's error, when nothing shows that it committed
 */
export async function recoverLostAnswer<T>(
  ctx: ServerContext,
  step: () => Promise<T>,
  accessTokenHash: string,
  committed: T,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const stored = await ctx.config.storage.grants
      .getAccessToken(accessTokenHash, ctx.now())
      .catch(() => null);
    if (stored === null) throw error;
    ctx.config.runtime.logger.warn(
      'a storage step committed but its answer was lost; the request is answered with what it stored',
      { grantId: stored.grantId, clientId: stored.clientId, error: describeFailure(error) },
    );
    return committed;
  }
}
