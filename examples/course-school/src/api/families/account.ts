/**
 * The account of the token's user: read it (`account:read`), rename it (`account:write`).
 * @module
 */
import { z } from 'zod';
import { ApiError, json } from '../errors.js';
import { type Caller, defineRoute } from '../route.js';
import { displayName, instant } from '../schemas.js';

const account = z.object({
  id: z.string(),
  email: z.email(),
  name: z.string(),
  role: z.enum(['owner', 'student']),
  created_at: instant,
});

function signedIn(caller: Caller) {
  if (caller.user === null) throw new ApiError('forbidden', 'no signed-in user');
  return caller.user;
}

const show = (u: { id: string; email: string; name: string; role: string; createdAt: number }) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  created_at: new Date(u.createdAt).toISOString(),
});

/** The account routes. */
export const accountRoutes = [
  defineRoute({
    method: 'GET',
    path: '/account',
    family: 'account',
    operationId: 'getAccount',
    summary: 'Read the signed-in user',
    scope: 'account:read',
    access: 'user',
    response: { status: 200, description: 'The account', schema: account },
    async handler({ caller }) {
      return json(200, show(signedIn(caller)));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/account',
    family: 'account',
    operationId: 'updateAccount',
    summary: 'Change the display name of the signed-in user',
    scope: 'account:write',
    access: 'user',
    body: { kind: 'json', schema: z.strictObject({ name: displayName(100) }) },
    response: { status: 200, description: 'The updated account', schema: account },
    async handler({ caller, body, services }) {
      const user = await services.data.renameUser(signedIn(caller).id, body.name);
      if (user === null) throw new ApiError('forbidden', 'the account no longer exists');
      return json(200, show(user));
    },
  }),
];
