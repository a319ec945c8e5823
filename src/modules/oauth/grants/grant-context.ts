import type { Clock } from '../../../infra/clock.js';
import type { ClientCredentials } from '../client-auth.service.js';
import type { ClientApplication, OAuthStorage } from '../oauth.storage.js';
import type { OAuthParams } from '../params.rules.js';
import type { OAuthTokens } from '../tokens.service.js';

export interface IdTokenRequest {
  application: ClientApplication;
  userId: number;
  scopes: readonly string[];
  nonce: string | null;
  authTime: number | null;
}

/** What every grant receives: its parameters, the client's credentials and the shared steps. */
export interface GrantContext {
  readonly storage: OAuthStorage;
  readonly clock: Clock;
  readonly tokens: OAuthTokens;
  readonly credentials: ClientCredentials;
  readonly params: OAuthParams;
  /** The client's address, recorded when a replay revokes tokens. */
  readonly ip: string;
  /** An RS256 id_token when `openid` is among the scopes, else null. */
  idToken(request: IdTokenRequest): Promise<string | null>;
}

export type TokenResponse = Record<string, string | number>;

/** Thrown inside a transaction when a conditional update lost its race; handled after rollback. */
export class LostRace extends Error {
  constructor(readonly family: string) {
    super('lost race');
  }
}
