import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../../infra/clock.js';
import { constantTimeEqual, digestToken, generateToken } from '../../infra/crypto.js';
import { isUniqueViolation } from '../../infra/db/index.js';
import {
  InvalidClientError,
  InvalidRedirectUriError,
  InvalidRequestError,
  InvalidScopeError,
  OAuthError,
  UnsupportedResponseTypeError,
} from '../../infra/errors/index.js';
import { OAUTH_DEFAULTS } from './oauth.defaults.js';
import type { ApplicationRow, OAuthStorage } from './oauth.storage.js';
import type { OAuthParams } from './params.rules.js';
import { checkChallenge } from './pkce.rules.js';
import { redirectUriAllowed, splitRedirectUris } from './redirect-uri.rules.js';
import { grantableScopes, joinScopes, splitScopes } from './scopes.rules.js';

/** A validated authorization request (RFC 6749 §4.1.1 plus PKCE and OIDC `nonce`). */
export interface AuthorizationRequest {
  application: ApplicationRow;
  redirectUri: string;
  scopes: string[];
  state: string | undefined;
  codeChallenge: string | undefined;
  codeChallengeMethod: string | undefined;
  nonce: string | undefined;
  rootNamespaceId: number | undefined;
  /** OIDC Core §3.1.2.1 `prompt`: `consent` asks even when consent is remembered; `none` never shows a page. */
  prompt: readonly string[];
}

/**
 * `fatal`: the client or redirect URI cannot be trusted, so the error is shown to the user
 * and never redirected (RFC 6749 §4.1.2.1, checklist B4). `redirect`: any other error, sent
 * to the validated redirect URI. `ok`: ask the user.
 */
export type PreAuthorization =
  { kind: 'fatal'; error: OAuthError } | { kind: 'redirect'; location: string } | { kind: 'ok'; request: AuthorizationRequest };

/** The parameters of an authorization request that the consent form carries back. */
export const AUTHORIZE_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'root_namespace_id',
  'prompt',
] as const;

const CONSENT_TTL_MS = 10 * 60 * 1000;

export class AuthorizeService {
  constructor(
    private readonly storage: OAuthStorage,
    private readonly clock: Clock,
    private readonly issuer: string,
    private readonly secretKeyBase: string,
  ) {}

  /** Validation order of reference §2.2, with S256-only PKCE (RFC 9700 §2.1.1). */
  async preAuthorize(params: OAuthParams): Promise<PreAuthorization> {
    const clientId = params.get('client_id');
    if (clientId === undefined) return { kind: 'fatal', error: new InvalidRequestError('Missing required parameter: client_id.') };
    const application = await this.storage.findApplicationByUid(clientId);
    if (!application) return { kind: 'fatal', error: new InvalidClientError() };
    const redirectUri = params.get('redirect_uri');
    if (redirectUri === undefined || !redirectUriAllowed(splitRedirectUris(application.redirect_uri), redirectUri)) {
      return { kind: 'fatal', error: new InvalidRedirectUriError() };
    }
    const state = params.get('state');
    const fail = (error: OAuthError): PreAuthorization => ({
      kind: 'redirect',
      location: this.redirectWith(redirectUri, { error: error.error, error_description: error.description, state }),
    });
    if (state !== undefined && state.length > OAUTH_DEFAULTS.maxStateLength) {
      return {
        kind: 'redirect',
        location: this.redirectWith(redirectUri, { error: 'invalid_request', error_description: 'state is too long.' }),
      };
    }
    const responseType = params.get('response_type');
    if (responseType === undefined) return fail(new InvalidRequestError('Missing required parameter: response_type.'));
    if (responseType !== 'code') return fail(new UnsupportedResponseTypeError());
    const scopes = grantableScopes(params.get('scope'), splitScopes(application.scopes));
    if (scopes === null) return fail(new InvalidScopeError());
    const challenge = params.get('code_challenge');
    const method = params.get('code_challenge_method');
    const required = application.confidential !== 1 || OAUTH_DEFAULTS.pkceRequiredForConfidential;
    const pkceProblem = checkChallenge(challenge, method, required);
    if (pkceProblem) return fail(new InvalidRequestError(pkceProblem));
    const nonce = params.get('nonce');
    if (nonce !== undefined && nonce.length > OAUTH_DEFAULTS.maxNonceLength) return fail(new InvalidRequestError('nonce is too long.'));
    const rootNamespace = params.get('root_namespace_id');
    if (rootNamespace !== undefined && !/^\d{1,15}$/.test(rootNamespace)) {
      return fail(new InvalidRequestError('root_namespace_id must be a namespace ID.'));
    }
    const prompt = splitScopes(params.get('prompt') ?? '');
    if (prompt.includes('none') && prompt.length > 1)
      return fail(new InvalidRequestError('prompt=none cannot be combined with other values.'));
    return {
      kind: 'ok',
      request: {
        prompt,
        application,
        redirectUri,
        scopes,
        state,
        codeChallenge: challenge,
        codeChallengeMethod: method,
        nonce,
        rootNamespaceId: rootNamespace === undefined ? undefined : Number(rootNamespace),
      },
    };
  }

  /**
   * Consent is remembered as the established product does: a confidential application the
   * user already authorized for these scopes or more (a live token of theirs carries them
   * all) gets its code without the consent page. A public client is asked every time, since
   * anyone can present its client_id (RFC 6749 §10.2); revoking the application under
   * Authorized applications revokes those tokens, and with them the remembered consent.
   */
  async consentRemembered(request: AuthorizationRequest, userId: number): Promise<boolean> {
    if (request.application.confidential !== 1) return false;
    const granted = await this.storage.liveTokenScopes(userId, request.application.id, this.clock.now());
    return granted.some((scopes) => {
      const held = new Set(splitScopes(scopes));
      return request.scopes.every((scope) => held.has(scope));
    });
  }

  /** RFC 6749 §4.1.2 and RFC 9207: `code`/`error` with `state` and the issuer `iss`. */
  redirectWith(redirectUri: string, values: Record<string, string | undefined>): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(values)) if (value !== undefined) url.searchParams.append(name, value);
    url.searchParams.append('iss', this.issuer);
    return url.toString();
  }

  /** `prompt=none` when a page would be needed: `login_required` or `consent_required` (OIDC Core §3.1.2.6). */
  interactionRequired(request: AuthorizationRequest, error: 'login_required' | 'consent_required'): string {
    return this.redirectWith(request.redirectUri, {
      error,
      error_description: error === 'login_required' ? 'The user is not signed in.' : 'The user has not authorized this application.',
      state: request.state,
    });
  }

  deny(request: AuthorizationRequest): string {
    return this.redirectWith(request.redirectUri, {
      error: 'access_denied',
      error_description: 'The resource owner or authorization server denied the request.',
      state: request.state,
    });
  }

  /**
   * Issues the code for an approved request and returns the redirect. `null` when this
   * consent form was already used: a replayed POST gets nothing (checklist B8).
   */
  async approve(request: AuthorizationRequest, userId: number, interactionId: string, authTime: number | null): Promise<string | null> {
    const code = generateToken('', OAUTH_DEFAULTS.secretBytes);
    const now = this.clock.now();
    try {
      await this.storage.insertGrant({
        application_id: request.application.id,
        user_id: userId,
        code_digest: digestToken(code),
        interaction_id: interactionId,
        redirect_uri: request.redirectUri,
        scopes: joinScopes(request.scopes),
        code_challenge: request.codeChallenge ?? null,
        code_challenge_method: request.codeChallengeMethod ?? null,
        nonce: request.nonce ?? null,
        root_namespace_id: request.rootNamespaceId ?? null,
        family: randomBytes(16).toString('hex'),
        auth_time: authTime,
        expires_at: now + OAUTH_DEFAULTS.authorizationCodeTtlSeconds * 1000,
        created_at: now,
      });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
    return this.redirectWith(request.redirectUri, { code, state: request.state });
  }

  /**
   * The consent form is bound to the signed-in session, the user and this one request: an
   * HMAC over all of them with a fresh interaction id, checked on POST besides the CSRF token.
   */
  consentTicket(sessionId: number, userId: number, params: OAuthParams, interactionId: string, issuedAt: number): string {
    const canonical = JSON.stringify([
      sessionId,
      userId,
      interactionId,
      issuedAt,
      AUTHORIZE_PARAMS.map((name) => params.get(name) ?? null),
    ]);
    return createHmac('sha256', this.secretKeyBase).update(`oauth-consent:${canonical}`).digest('base64url');
  }

  newInteraction(): { interactionId: string; issuedAt: number } {
    return { interactionId: randomBytes(16).toString('base64url'), issuedAt: this.clock.now() };
  }

  consentValid(sessionId: number, userId: number, params: OAuthParams, interactionId: string, issuedAt: number, ticket: string): boolean {
    if (!Number.isSafeInteger(issuedAt) || this.clock.now() - issuedAt > CONSENT_TTL_MS || issuedAt > this.clock.now()) return false;
    return constantTimeEqual(ticket, this.consentTicket(sessionId, userId, params, interactionId, issuedAt));
  }
}
