/**
 * The storage contract's types, gathered: one module per aggregate under `./contract/`, the
 * composed {@link Storage} in `./contract/storage.ts`. Import from here inside the library.
 * @module
 */
export type { ClientMetadata, ClientRecord, ClientStore } from './contract/clients.js';
export type {
  AuthorizationCodeRecord,
  CodeRedemption,
  CodeStore,
  RedeemResult,
} from './contract/codes.js';
export { CODE_TOMBSTONE_SECONDS } from './contract/codes.js';
export type { ConsentRecord, ConsentStore } from './contract/consents.js';
export type {
  AccessTokenRecord,
  GrantRecord,
  GrantStore,
  RefreshRotation,
  RefreshTokenRecord,
  RotateResult,
} from './contract/grants.js';
export type {
  AuthorizationRequest,
  InteractionBinding,
  InteractionCompletion,
  InteractionStore,
  PendingAuthorizationRecord,
} from './contract/interactions.js';
export type { SigningKeyRecord, SigningKeyStore } from './contract/keys.js';
export type { ReplayStore } from './contract/replay.js';
export type { Storage } from './contract/storage.js';
