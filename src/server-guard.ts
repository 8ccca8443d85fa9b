/**
 * `server.guard({ resource })`: a resource-server guard bound to one configured resource, verifying
 * tokens against this server's storage and pointing its challenges at the resource's RFC 9728
 * metadata.
 * @module
 */
import { createResourceGuard, type GuardDpopOptions, type ResourceGuard } from './resource-server/guard.js';
import type { ServerContext } from './server-context.js';

/**
 * The guard of `resource`. DPoP-bound tokens are checked with the server's DPoP settings: its
 * algorithms, `iat` window, nonces, and the replay store of its storage.
 *
 * @throws TypeError when `resource` is not one of the configured resources
 */
export function serverGuard(ctx: ServerContext, resource: string): ResourceGuard {
  const configured = ctx.config.resources.find((r) => r.resource === resource);
  if (configured === undefined) throw new TypeError(`guard: ${resource} is not one of options.resources`);
  return createResourceGuard({
    resource,
    verifier: ctx.verifier,
    ...(configured.metadataUrl === undefined ? {} : { resourceMetadataUrl: configured.metadataUrl }),
    dpop: dpopProofOptionsOf(ctx),
  });
}

function dpopProofOptionsOf(ctx: ServerContext): GuardDpopOptions | false {
  const { dpop, runtime } = ctx.config;
  if (!dpop.enabled) return false;
  return {
    algorithms: dpop.algorithms,
    replayStore: ctx.replayStore,
    nonces: dpop.nonces,
    iatWindowSeconds: dpop.iatWindowSeconds,
    clock: runtime.clock,
  };
}
