/**
 * Rows of the SQLite tables and the contract records they hold: the column lists the statements
 * use, and the conversions both ways. Lists and nested documents are JSON text; booleans 0/1;
 * optional fields are absent from a record, never `undefined`.
 * @module
 */
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  AuthorizationRequest,
  ClientMetadata,
  ClientRecord,
  ConsentRecord,
  GrantRecord,
  PendingAuthorizationRecord,
  RefreshTokenRecord,
  SigningKeyRecord,
} from '../types.js';
import type { SqliteValue } from './driver.js';

const json = (value: unknown): string => JSON.stringify(value);
const list = (text: string): readonly string[] => JSON.parse(text) as string[];

/** `{ [key]: value }` when the column is not NULL, else `{}`. */
function optional<K extends string, V>(key: K, value: V | null): { [P in K]?: V } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: V };
}

/** A comma-separated column list, with an optional table alias. */
function columns(names: readonly string[], alias?: string): string {
  return names.map((name) => (alias === undefined ? name : `${alias}.${name}`)).join(', ');
}

/** `?, ?, ?` for `n` parameters. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

// ---- clients -----------------------------------------------------------------------------------

export interface ClientRow {
  client_id: string;
  secret_hash: string | null;
  metadata: string;
  origin: ClientRecord['origin'];
  created_at: number;
  expires_at: number | null;
}

export const CLIENT_COLUMNS = columns([
  'client_id',
  'secret_hash',
  'metadata',
  'origin',
  'created_at',
  'expires_at',
]);

export const clientParams = (c: ClientRecord): SqliteValue[] => [
  c.clientId,
  c.secretHash ?? null,
  json(c.metadata),
  c.origin,
  c.createdAt,
  c.expiresAt ?? null,
];

export const clientRecord = (r: ClientRow): ClientRecord => ({
  clientId: r.client_id,
  ...optional('secretHash', r.secret_hash),
  metadata: JSON.parse(r.metadata) as ClientMetadata,
  origin: r.origin,
  createdAt: r.created_at,
  ...optional('expiresAt', r.expires_at),
});

// ---- pending authorizations --------------------------------------------------------------------

export interface PendingRow {
  id_hash: string;
  request: string;
  created_at: number;
  expires_at: number;
  user_id: string | null;
  session_id: string | null;
  csrf_hash: string | null;
}

export const PENDING_COLUMNS = columns([
  'id_hash',
  'request',
  'created_at',
  'expires_at',
  'user_id',
  'session_id',
  'csrf_hash',
]);

export const pendingParams = (p: PendingAuthorizationRecord): SqliteValue[] => [
  p.idHash,
  json(p.request),
  p.createdAt,
  p.expiresAt,
  p.userId ?? null,
  p.sessionId ?? null,
  p.csrfHash ?? null,
];

export const pendingRecord = (r: PendingRow): PendingAuthorizationRecord => ({
  idHash: r.id_hash,
  request: JSON.parse(r.request) as AuthorizationRequest,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  ...optional('userId', r.user_id),
  ...optional('sessionId', r.session_id),
  ...optional('csrfHash', r.csrf_hash),
});

// ---- authorization codes -----------------------------------------------------------------------

export interface CodeRow {
  code_hash: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  redirect_uri_sent: number;
  code_challenge: string;
  code_challenge_method: 'S256';
  scope: string;
  resources: string;
  nonce: string | null;
  auth_time: number;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export const CODE_COLUMNS = columns([
  'code_hash',
  'grant_id',
  'client_id',
  'user_id',
  'redirect_uri',
  'redirect_uri_sent',
  'code_challenge',
  'code_challenge_method',
  'scope',
  'resources',
  'nonce',
  'auth_time',
  'created_at',
  'expires_at',
  'consumed_at',
]);

export const codeParams = (c: AuthorizationCodeRecord): SqliteValue[] => [
  c.codeHash,
  c.grantId,
  c.clientId,
  c.userId,
  c.redirectUri,
  c.redirectUriSent ? 1 : 0,
  c.codeChallenge,
  c.codeChallengeMethod,
  json(c.scope),
  json(c.resources),
  c.nonce ?? null,
  c.authTime,
  c.createdAt,
  c.expiresAt,
  c.consumedAt ?? null,
];

export const codeRecord = (r: CodeRow): AuthorizationCodeRecord => ({
  codeHash: r.code_hash,
  grantId: r.grant_id,
  clientId: r.client_id,
  userId: r.user_id,
  redirectUri: r.redirect_uri,
  redirectUriSent: r.redirect_uri_sent === 1,
  codeChallenge: r.code_challenge,
  codeChallengeMethod: r.code_challenge_method,
  scope: list(r.scope),
  resources: list(r.resources),
  ...optional('nonce', r.nonce),
  authTime: r.auth_time,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  ...optional('consumedAt', r.consumed_at),
});

// ---- grants ------------------------------------------------------------------------------------

export interface GrantRow {
  grant_id: string;
  client_id: string;
  user_id: string;
  scope: string;
  resources: string;
  auth_time: number;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export const GRANT_COLUMNS = columns([
  'grant_id',
  'client_id',
  'user_id',
  'scope',
  'resources',
  'auth_time',
  'created_at',
  'expires_at',
  'revoked_at',
]);

export const grantParams = (g: GrantRecord): SqliteValue[] => [
  g.grantId,
  g.clientId,
  g.userId,
  json(g.scope),
  json(g.resources),
  g.authTime,
  g.createdAt,
  g.expiresAt,
  g.revokedAt ?? null,
];

export const grantRecord = (r: GrantRow): GrantRecord => ({
  grantId: r.grant_id,
  clientId: r.client_id,
  userId: r.user_id,
  scope: list(r.scope),
  resources: list(r.resources),
  authTime: r.auth_time,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  ...optional('revokedAt', r.revoked_at),
});

// ---- access tokens -----------------------------------------------------------------------------

export interface AccessTokenRow {
  token_hash: string;
  jti: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  scope: string;
  audience: string;
  issued_at: number;
  expires_at: number;
  revoked_at: number | null;
  /** Added by schema 3. */
  dpop_jkt: string | null;
}

const ACCESS_NAMES = [
  'token_hash',
  'jti',
  'grant_id',
  'client_id',
  'user_id',
  'scope',
  'audience',
  'issued_at',
  'expires_at',
  'revoked_at',
  'dpop_jkt',
] as const;
export const ACCESS_COLUMNS = columns(ACCESS_NAMES);
export const ACCESS_COLUMNS_OF_T = columns(ACCESS_NAMES, 't');
export const ACCESS_PARAM_COUNT = ACCESS_NAMES.length;

export const accessTokenParams = (t: AccessTokenRecord): SqliteValue[] => [
  t.tokenHash,
  t.jti,
  t.grantId,
  t.clientId,
  t.userId,
  json(t.scope),
  json(t.audience),
  t.issuedAt,
  t.expiresAt,
  t.revokedAt ?? null,
  t.dpopJkt ?? null,
];

export const accessTokenRecord = (r: AccessTokenRow): AccessTokenRecord => ({
  tokenHash: r.token_hash,
  jti: r.jti,
  grantId: r.grant_id,
  clientId: r.client_id,
  userId: r.user_id,
  scope: list(r.scope),
  audience: list(r.audience),
  issuedAt: r.issued_at,
  expiresAt: r.expires_at,
  ...optional('revokedAt', r.revoked_at),
  ...optional('dpopJkt', r.dpop_jkt),
});

// ---- refresh tokens ----------------------------------------------------------------------------

/** A refresh token row with its grant's `auth_time`, read through the join every read makes. */
export interface RefreshTokenRow {
  token_hash: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  scope: string;
  resources: string;
  issued_at: number;
  expires_at: number;
  rotated_at: number | null;
  successor_hash: string | null;
  sealed_successor: string | null;
  revoked_at: number | null;
  /** Added by schema 3. */
  dpop_jkt: string | null;
  auth_time: number;
}

const REFRESH_NAMES = [
  'token_hash',
  'grant_id',
  'client_id',
  'user_id',
  'scope',
  'resources',
  'issued_at',
  'expires_at',
  'rotated_at',
  'successor_hash',
  'sealed_successor',
  'revoked_at',
  'dpop_jkt',
] as const;
export const REFRESH_COLUMNS = columns(REFRESH_NAMES);
export const REFRESH_COLUMNS_OF_T = columns(REFRESH_NAMES, 't');
export const REFRESH_PARAM_COUNT = REFRESH_NAMES.length;

/** `authTime` is not a column: it is the grant's. */
export const refreshTokenParams = (t: RefreshTokenRecord): SqliteValue[] => [
  t.tokenHash,
  t.grantId,
  t.clientId,
  t.userId,
  json(t.scope),
  json(t.resources),
  t.issuedAt,
  t.expiresAt,
  t.rotatedAt ?? null,
  t.successorHash ?? null,
  t.sealedSuccessor ?? null,
  t.revokedAt ?? null,
  t.dpopJkt ?? null,
];

export const refreshTokenRecord = (r: RefreshTokenRow): RefreshTokenRecord => ({
  tokenHash: r.token_hash,
  grantId: r.grant_id,
  clientId: r.client_id,
  userId: r.user_id,
  scope: list(r.scope),
  resources: list(r.resources),
  issuedAt: r.issued_at,
  expiresAt: r.expires_at,
  ...optional('rotatedAt', r.rotated_at),
  ...optional('successorHash', r.successor_hash),
  ...optional('sealedSuccessor', r.sealed_successor),
  ...optional('revokedAt', r.revoked_at),
  ...optional('dpopJkt', r.dpop_jkt),
  authTime: r.auth_time,
});

// ---- consents ----------------------------------------------------------------------------------

export interface ConsentRow {
  user_id: string;
  client_id: string;
  scope: string;
  resources: string;
  created_at: number;
  updated_at: number;
}

export const CONSENT_COLUMNS = columns([
  'user_id',
  'client_id',
  'scope',
  'resources',
  'created_at',
  'updated_at',
]);

export const consentParams = (c: ConsentRecord): SqliteValue[] => [
  c.userId,
  c.clientId,
  json(c.scope),
  json(c.resources),
  c.createdAt,
  c.updatedAt,
];

export const consentRecord = (r: ConsentRow): ConsentRecord => ({
  userId: r.user_id,
  clientId: r.client_id,
  scope: list(r.scope),
  resources: list(r.resources),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

// ---- signing keys ------------------------------------------------------------------------------

export interface SigningKeyRow {
  kid: string;
  alg: string;
  private_jwk: string;
  created_at: number;
  activates_at: number;
  retires_at: number | null;
  expires_at: number | null;
}

export const KEY_COLUMNS = columns([
  'kid',
  'alg',
  'private_jwk',
  'created_at',
  'activates_at',
  'retires_at',
  'expires_at',
]);

export const keyParams = (k: SigningKeyRecord): SqliteValue[] => [
  k.kid,
  k.alg,
  k.privateJwk,
  k.createdAt,
  k.activatesAt,
  k.retiresAt ?? null,
  k.expiresAt ?? null,
];

export const keyRecord = (r: SigningKeyRow): SigningKeyRecord => ({
  kid: r.kid,
  alg: r.alg,
  privateJwk: r.private_jwk,
  createdAt: r.created_at,
  activatesAt: r.activates_at,
  ...optional('retiresAt', r.retires_at),
  ...optional('expiresAt', r.expires_at),
});
