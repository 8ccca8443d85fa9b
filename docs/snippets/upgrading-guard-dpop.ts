// Passing what a DPoP proof is checked against to `guard.check` (docs/upgrading.md).
import type { GuardRequirement, ResourceGuard } from 'portcullis';

declare const guard: ResourceGuard;
declare const requirement: GuardRequirement;

export async function check(request: Request) {
  // #region guard-request
  // Before: guard.check({ headers: { authorization } }, requirement)
  const result = await guard.check(
    {
      headers: {
        authorization: request.headers.get('authorization') ?? undefined,
        dpop: request.headers.get('dpop') ?? undefined,
      },
      method: request.method,
      url: request.url,
    },
    requirement,
  );
  // #endregion guard-request
  return result;
}
