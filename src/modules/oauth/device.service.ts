import { randomBytes, randomInt } from 'node:crypto';
import type { Clock } from '../../infra/clock.js';
import { digestToken, generateToken } from '../../infra/crypto.js';
import { isUniqueViolation } from '../../infra/db/index.js';
import { InvalidScopeError } from '../../infra/errors/index.js';
import { OAUTH_DEFAULTS } from './oauth.defaults.js';
import type { ApplicationRow, DeviceGrantRow, OAuthStorage } from './oauth.storage.js';
import { grantableScopes, joinScopes, splitScopes } from './scopes.rules.js';

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export type UserCodeLookup =
  | { kind: 'found'; grant: DeviceGrantRow; application: ApplicationRow; scopes: string[] }
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'used' };

/** Upper-cases and drops separators, so `bcdf-ghjk` and `BCDFGHJK` are the same code (RFC 8628 §6.1). */
export function normalizeUserCode(value: string): string {
  return value.toUpperCase().replace(/[\s-]+/g, '');
}

/** `BCDF-GHJK`: the dash only helps people read it. */
export const formatUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;

function newUserCode(): string {
  const alphabet = OAUTH_DEFAULTS.userCodeAlphabet;
  let code = '';
  for (let i = 0; i < OAUTH_DEFAULTS.userCodeLength; i += 1) code += alphabet[randomInt(alphabet.length)];
  return code;
}

/** RFC 8628: the device authorization endpoint and the user's side of the verification page. */
export class DeviceService {
  constructor(
    private readonly storage: OAuthStorage,
    private readonly clock: Clock,
    private readonly verificationUri: string,
  ) {}

  /** RFC 8628 §3.1–3.2; the scope must be within the application's (as at /oauth/authorize). */
  async authorize(application: ApplicationRow, scope: string | undefined): Promise<DeviceAuthorization> {
    const scopes = grantableScopes(scope, splitScopes(application.scopes));
    if (scopes === null) throw new InvalidScopeError();
    const now = this.clock.now();
    const deviceCode = generateToken('', OAUTH_DEFAULTS.secretBytes);
    for (let attempt = 0; ; attempt += 1) {
      const userCode = newUserCode();
      try {
        await this.storage.insertDeviceGrant({
          application_id: application.id,
          device_code_digest: digestToken(deviceCode),
          user_code_digest: digestToken(userCode),
          scopes: joinScopes(scopes),
          interval_seconds: OAUTH_DEFAULTS.devicePollIntervalSeconds,
          family: randomBytes(16).toString('hex'),
          expires_at: now + OAUTH_DEFAULTS.deviceCodeTtlSeconds * 1000,
          created_at: now,
        });
      } catch (error) {
        // A user code may collide with an old one; draw again a few times.
        if (isUniqueViolation(error) && attempt < 5) continue;
        throw error;
      }
      const display = formatUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: display,
        verification_uri: this.verificationUri,
        verification_uri_complete: `${this.verificationUri}?user_code=${encodeURIComponent(display)}`,
        expires_in: OAUTH_DEFAULTS.deviceCodeTtlSeconds,
        interval: OAUTH_DEFAULTS.devicePollIntervalSeconds,
      };
    }
  }

  /** Finds a pending grant by what the user typed; a lookup by digest, so no comparison leaks timing. */
  async lookup(typed: string): Promise<UserCodeLookup> {
    const code = normalizeUserCode(typed);
    const valid = new RegExp(`^[${OAUTH_DEFAULTS.userCodeAlphabet}]{${OAUTH_DEFAULTS.userCodeLength}}$`).test(code);
    const grant = valid ? await this.storage.findDeviceGrantByUserDigest(digestToken(code)) : undefined;
    if (!grant) return { kind: 'unknown' };
    if (grant.status !== 'pending') return { kind: 'used' };
    if (grant.expires_at <= this.clock.now()) return { kind: 'expired' };
    const application = await this.storage.findApplicationById(grant.application_id);
    if (!application) return { kind: 'unknown' };
    return { kind: 'found', grant, application, scopes: splitScopes(grant.scopes) };
  }

  /** The user's answer; false when the grant is no longer pending (answered, expired). */
  decide(grant: DeviceGrantRow, userId: number, approve: boolean): Promise<boolean> {
    return this.storage.decideDeviceGrant(grant.id, userId, approve ? 'approved' : 'denied', this.clock.now());
  }
}
