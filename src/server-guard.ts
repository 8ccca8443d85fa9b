/**
 * `server.guard({ resource })`: a resource-server guard bound to one configured resource, verifying
 * tokens against this server's storage and pointing its challenges at the resource's RFC 9728
 * metadata.
 * @module
 */
import { createResourceGuard, type ResourceGuard } from './resource-server/guard.js';
import type { ServerContext } from './server-context.js';

/**
 * The guard of `resource`.
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
  });
}
