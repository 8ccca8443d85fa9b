/**
 * Stores a grant with its tokens the only way the storage contract creates grants: by redeeming
 * an authorization code allocated for it. For tests that need a grant without running a flow.
 */

import type { AccessTokenRecord, GrantRecord, RefreshTokenRecord, Storage } from '../../src/storage/types.js';
import { fixtures } from '../../src/testing/index.js';

/** Redeems a fresh code into `grant` with `accessToken` (and `refreshToken`); throws unless redeemed. */
export async function seedGrant(
  storage: Storage,
  grant: GrantRecord,
  accessToken: AccessTokenRecord,
  refreshToken?: RefreshTokenRecord,
): Promise<void> {
  const code = fixtures.code({
    grantId: grant.grantId,
    clientId: grant.clientId,
    userId: grant.userId,
    createdAt: grant.createdAt,
    expiresAt: grant.createdAt + 60,
  });
  await storage.codes.create(code);
  const result = await storage.codes.redeem({
    codeHash: code.codeHash,
    grant,
    accessToken,
    ...(refreshToken === undefined ? {} : { refreshToken }),
    now: grant.createdAt,
  });
  if (result.outcome !== 'redeemed') throw new Error(`seeding grant ${grant.grantId}: ${result.outcome}`);
}
