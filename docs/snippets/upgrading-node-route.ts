// Migrating from `toOAuthRequest(req, limit)` of `portcullis/node` (docs/upgrading.md).
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { createAuthorizationServer, memoryStorage } from 'portcullis';
import { toOAuthRequest, toResponse } from 'portcullis/fetch';

const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });

// #region token-route
// Before: const request = await toOAuthRequest(req, oauth.maxBodyBytes); if (request === null) ... 413
const tokenOnly = getRequestListener(
  async (fetchRequest, { incoming }) => {
    const translated = await toOAuthRequest(fetchRequest, {
      maxBodyBytes: oauth.maxBodyBytes,
      remoteAddress: incoming.socket.remoteAddress,
    });
    if (!translated.ok) return toResponse(translated.response); // 413 or 400
    return toResponse(await oauth.handlers.token(translated.request));
  },
  { overrideGlobalObjects: false },
);
createServer(tokenOnly).listen(3000, '127.0.0.1');
// #endregion token-route
