/**
 * The storage tables as the statements see them: column lists with their SQL types, and the
 * conversions between a row and a contract record. The DDL lives in `./migrations.ts`.
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

/** A table's columns, in the order its parameter lists and rows use. */
export class Columns {
  readonly #columns: readonly (readonly [name: string, type: string])[];

  constructor(columns: readonly (readonly [name: string, type: string])[]) {
    this.#columns = columns;
  }

  /** `a, b, c`, or `t.a, t.b, t.c` with an alias. */
  list(alias?: string): string {
    return this.#columns.map(([name]) => (alias === undefined ? name : `${alias}.${name}`)).join(', ');
  }

  /**
   * `$n::type, ...` starting at `$first`. The casts matter in `INSERT ... SELECT` (inside a CTE),
   * where a bare parameter would be typed `text` instead of taking the column's type.
   */
  params(first: number): string {
    return this.#columns.map(([, type], i) => `$${first + i}::${type}`).join(', ');
  }

  /** `b = $2::type, c = $3::type` for every column but the first (the key, `$1`). */
  assignments(): string {
    return this.#columns
      .slice(1)
      .map(([name, type], i) => `${name} = $${i + 2}::${type}`)
      .join(', ');
  }

  /** `values` (a {@link Table.params} list, in column order) as an object keyed by column name: a row as JSON. */
  row(values: readonly unknown[]): Record<string, unknown> {
    const row: Record<string, unknown> = {};
    this.#columns.forEach(([name], i) => {
      row[name] = values[i];
    });
    return row;
  }

  /** How many columns, hence parameters. */
  get length(): number {
    return this.#columns.length;
  }
}

/** How one table maps between contract records and rows. */
export interface Table<Rec, Row> {
  /** The unquoted table name. */
  readonly name: string;
  readonly columns: Columns;
  /** The record as statement parameters, in column order. */
  params(record: Rec): unknown[];
  /** The record a row holds. */
  record(row: Row): Rec;
}

// Optional record fields are absent, never `undefined`, in what the storage returns.
function optional<K extends string, V>(key: K, value: V | null): { [P in K]?: V } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: V };
}

// ---- clients -----------------------------------------------------------------------------------

/** A row of `clients`. */
export interface ClientRow {
  client_id: string;
  secret_hash: string | null;
  metadata: ClientMetadata;
  origin: ClientRecord['origin'];
  created_at: number;
  expires_at: number | null;
}

/** Registered clients. */
export const clientsTable: Table<ClientRecord, ClientRow> = {
  name: 'clients',
  columns: new Columns([
    ['client_id', 'text'],
    ['secret_hash', 'text'],
    ['metadata', 'jsonb'],
    ['origin', 'text'],
    ['created_at', 'bigint'],
    ['expires_at', 'bigint'],
  ]),
  params: (c) => [
    c.clientId,
    c.secretHash ?? null,
    JSON.stringify(c.metadata),
    c.origin,
    c.createdAt,
    c.expiresAt ?? null,
  ],
  record: (r) => ({
    clientId: r.client_id,
    ...optional('secretHash', r.secret_hash),
    metadata: r.metadata,
    origin: r.origin,
    createdAt: r.created_at,
    ...optional('expiresAt', r.expires_at),
  }),
};

// ---- pending authorizations --------------------------------------------------------------------

/** A row of `pending_authorizations`. */
export interface PendingRow {
  id_hash: string;
  request: AuthorizationRequest;
  created_at: number;
  expires_at: number;
  user_id: string | null;
  session_id: string | null;
  csrf_hash: string | null;
}

/** Pending authorizations, by id hash. */
export const pendingAuthorizationsTable: Table<PendingAuthorizationRecord, PendingRow> = {
  name: 'pending_authorizations',
  columns: new Columns([
    ['id_hash', 'text'],
    ['request', 'jsonb'],
    ['created_at', 'bigint'],
    ['expires_at', 'bigint'],
    ['user_id', 'text'],
    ['session_id', 'text'],
    ['csrf_hash', 'text'],
  ]),
  params: (p) => [
    p.idHash,
    JSON.stringify(p.request),
    p.createdAt,
    p.expiresAt,
    p.userId ?? null,
    p.sessionId ?? null,
    p.csrfHash ?? null,
  ],
  record: (r) => ({
    idHash: r.id_hash,
    request: r.request,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    ...optional('userId', r.user_id),
    ...optional('sessionId', r.session_id),
    ...optional('csrfHash', r.csrf_hash),
  }),
};

// ---- authorization codes -----------------------------------------------------------------------

/** A row of `authorization_codes`. */
export interface CodeRow {
  code_hash: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  redirect_uri_sent: boolean;
  code_challenge: string;
  code_challenge_method: 'S256';
  scope: string[];
  resources: string[];
  nonce: string | null;
  auth_time: number;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

/** Authorization codes and their consumed tombstones. */
export const authorizationCodesTable: Table<AuthorizationCodeRecord, CodeRow> = {
  name: 'authorization_codes',
  columns: new Columns([
    ['code_hash', 'text'],
    ['grant_id', 'text'],
    ['client_id', 'text'],
    ['user_id', 'text'],
    ['redirect_uri', 'text'],
    ['redirect_uri_sent', 'boolean'],
    ['code_challenge', 'text'],
    ['code_challenge_method', 'text'],
    ['scope', 'text[]'],
    ['resources', 'text[]'],
    ['nonce', 'text'],
    ['auth_time', 'bigint'],
    ['created_at', 'bigint'],
    ['expires_at', 'bigint'],
    ['consumed_at', 'bigint'],
  ]),
  params: (c) => [
    c.codeHash,
    c.grantId,
    c.clientId,
    c.userId,
    c.redirectUri,
    c.redirectUriSent,
    c.codeChallenge,
    c.codeChallengeMethod,
    c.scope,
    c.resources,
    c.nonce ?? null,
    c.authTime,
    c.createdAt,
    c.expiresAt,
    c.consumedAt ?? null,
  ],
  record: (r) => ({
    codeHash: r.code_hash,
    grantId: r.grant_id,
    clientId: r.client_id,
    userId: r.user_id,
    redirectUri: r.redirect_uri,
    redirectUriSent: r.redirect_uri_sent,
    codeChallenge: r.code_challenge,
    codeChallengeMethod: r.code_challenge_method,
    scope: r.scope,
    resources: r.resources,
    ...optional('nonce', r.nonce),
    authTime: r.auth_time,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    ...optional('consumedAt', r.consumed_at),
  }),
};

// ---- grants ------------------------------------------------------------------------------------

/** A row of `grants` (statements skip the revoked placeholders that schema version 1 allowed). */
export interface GrantRow {
  grant_id: string;
  client_id: string;
  user_id: string;
  scope: string[];
  resources: string[];
  auth_time: number;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** Grants. */
export const grantsTable: Table<GrantRecord, GrantRow> = {
  name: 'grants',
  columns: new Columns([
    ['grant_id', 'text'],
    ['client_id', 'text'],
    ['user_id', 'text'],
    ['scope', 'text[]'],
    ['resources', 'text[]'],
    ['auth_time', 'bigint'],
    ['created_at', 'bigint'],
    ['expires_at', 'bigint'],
    ['revoked_at', 'bigint'],
  ]),
  params: (g) => [
    g.grantId,
    g.clientId,
    g.userId,
    g.scope,
    g.resources,
    g.authTime,
    g.createdAt,
    g.expiresAt,
    g.revokedAt ?? null,
  ],
  record: (r) => ({
    grantId: r.grant_id,
    clientId: r.client_id,
    userId: r.user_id,
    scope: r.scope,
    resources: r.resources,
    authTime: r.auth_time,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    ...optional('revokedAt', r.revoked_at),
  }),
};

// ---- access tokens -----------------------------------------------------------------------------

/** A row of `access_tokens`. */
export interface AccessTokenRow {
  token_hash: string;
  jti: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  scope: string[];
  audience: string[];
  issued_at: number;
  expires_at: number;
  revoked_at: number | null;
  /** Added by schema 5. */
  dpop_jkt: string | null;
}

/** Access tokens, by token hash. */
export const accessTokensTable: Table<AccessTokenRecord, AccessTokenRow> = {
  name: 'access_tokens',
  columns: new Columns([
    ['token_hash', 'text'],
    ['jti', 'text'],
    ['grant_id', 'text'],
    ['client_id', 'text'],
    ['user_id', 'text'],
    ['scope', 'text[]'],
    ['audience', 'text[]'],
    ['issued_at', 'bigint'],
    ['expires_at', 'bigint'],
    ['revoked_at', 'bigint'],
    ['dpop_jkt', 'text'],
  ]),
  params: (t) => [
    t.tokenHash,
    t.jti,
    t.grantId,
    t.clientId,
    t.userId,
    t.scope,
    t.audience,
    t.issuedAt,
    t.expiresAt,
    t.revokedAt ?? null,
    t.dpopJkt ?? null,
  ],
  record: (r) => ({
    tokenHash: r.token_hash,
    jti: r.jti,
    grantId: r.grant_id,
    clientId: r.client_id,
    userId: r.user_id,
    scope: r.scope,
    audience: r.audience,
    issuedAt: r.issued_at,
    expiresAt: r.expires_at,
    ...optional('revokedAt', r.revoked_at),
    ...optional('dpopJkt', r.dpop_jkt),
  }),
};

// ---- refresh tokens ----------------------------------------------------------------------------

/** A row of `refresh_tokens`, with its grant's `auth_time` (read through the join every read makes). */
export interface RefreshTokenRow {
  token_hash: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  scope: string[];
  resources: string[];
  issued_at: number;
  expires_at: number;
  rotated_at: number | null;
  successor_hash: string | null;
  sealed_successor: string | null;
  revoked_at: number | null;
  /** Added by schema 5. */
  dpop_jkt: string | null;
  auth_time: number;
}

/**
 * Refresh tokens, rotated ones included. `authTime` is not a column: it is the grant's, and every
 * read of a refresh token joins its grant anyway (to check that the grant is active).
 */
export const refreshTokensTable: Table<RefreshTokenRecord, RefreshTokenRow> = {
  name: 'refresh_tokens',
  columns: new Columns([
    ['token_hash', 'text'],
    ['grant_id', 'text'],
    ['client_id', 'text'],
    ['user_id', 'text'],
    ['scope', 'text[]'],
    ['resources', 'text[]'],
    ['issued_at', 'bigint'],
    ['expires_at', 'bigint'],
    ['rotated_at', 'bigint'],
    ['successor_hash', 'text'],
    ['sealed_successor', 'text'],
    ['revoked_at', 'bigint'],
    ['dpop_jkt', 'text'],
  ]),
  params: (t) => [
    t.tokenHash,
    t.grantId,
    t.clientId,
    t.userId,
    t.scope,
    t.resources,
    t.issuedAt,
    t.expiresAt,
    t.rotatedAt ?? null,
    t.successorHash ?? null,
    t.sealedSuccessor ?? null,
    t.revokedAt ?? null,
    t.dpopJkt ?? null,
  ],
  record: (r) => ({
    tokenHash: r.token_hash,
    grantId: r.grant_id,
    clientId: r.client_id,
    userId: r.user_id,
    scope: r.scope,
    resources: r.resources,
    issuedAt: r.issued_at,
    expiresAt: r.expires_at,
    ...optional('rotatedAt', r.rotated_at),
    ...optional('successorHash', r.successor_hash),
    ...optional('sealedSuccessor', r.sealed_successor),
    ...optional('revokedAt', r.revoked_at),
    ...optional('dpopJkt', r.dpop_jkt),
    authTime: r.auth_time,
  }),
};

// ---- consents ----------------------------------------------------------------------------------

/** A row of `consents`. */
export interface ConsentRow {
  user_id: string;
  client_id: string;
  scope: string[];
  resources: string[];
  created_at: number;
  updated_at: number;
}

/** Remembered consents, by user and client. */
export const consentsTable: Table<ConsentRecord, ConsentRow> = {
  name: 'consents',
  columns: new Columns([
    ['user_id', 'text'],
    ['client_id', 'text'],
    ['scope', 'text[]'],
    ['resources', 'text[]'],
    ['created_at', 'bigint'],
    ['updated_at', 'bigint'],
  ]),
  params: (c) => [c.userId, c.clientId, c.scope, c.resources, c.createdAt, c.updatedAt],
  record: (r) => ({
    userId: r.user_id,
    clientId: r.client_id,
    scope: r.scope,
    resources: r.resources,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }),
};

// ---- signing keys ------------------------------------------------------------------------------

/** A row of `signing_keys`. */
export interface SigningKeyRow {
  kid: string;
  alg: string;
  private_jwk: string;
  created_at: number;
  activates_at: number;
  retires_at: number | null;
  expires_at: number | null;
}

/** Signing key pairs (private JWKs: protect the database). */
export const signingKeysTable: Table<SigningKeyRecord, SigningKeyRow> = {
  name: 'signing_keys',
  columns: new Columns([
    ['kid', 'text'],
    ['alg', 'text'],
    ['private_jwk', 'text'],
    ['created_at', 'bigint'],
    ['activates_at', 'bigint'],
    ['retires_at', 'bigint'],
    ['expires_at', 'bigint'],
  ]),
  params: (k) => [
    k.kid,
    k.alg,
    k.privateJwk,
    k.createdAt,
    k.activatesAt,
    k.retiresAt ?? null,
    k.expiresAt ?? null,
  ],
  record: (r) => ({
    kid: r.kid,
    alg: r.alg,
    privateJwk: r.private_jwk,
    createdAt: r.created_at,
    activatesAt: r.activates_at,
    ...optional('retiresAt', r.retires_at),
    ...optional('expiresAt', r.expires_at),
  }),
};
