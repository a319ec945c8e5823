import { randomBytes } from 'node:crypto';
import type { Clock } from '../../infra/clock.js';
import { TOKEN_PREFIX, digestToken, generateToken } from '../../infra/crypto.js';
import { NotFoundError, ValidationError, type ValidationMessages } from '../../infra/errors/index.js';
import { OAUTH_DEFAULTS } from './oauth.defaults.js';
import type { ApplicationChanges, ApplicationRow, Authorization, OAuthStorage } from './oauth.storage.js';
import { parseRedirectUris } from './redirect-uri.rules.js';
import { joinScopes, parseScope, registrableScopes } from './scopes.rules.js';

export interface ApplicationInput {
  name: string;
  redirectUri: string;
  /** Space-separated (API) or a list (page). */
  scopes: string | readonly string[];
  confidential: boolean;
}

export interface Registrant {
  /** `null` for instance-wide applications created through the admin API. */
  ownerId: number | null;
  isAdmin: boolean;
}

export interface ApplicationWithSecret {
  application: ApplicationRow;
  /** The plain secret, shown once (DESIGN.md §4). */
  secret: string;
}

/**
 * OAuth applications (reference §2.10): registration limits the scopes an application may
 * ask for; the client secret is random, prefixed `bss_`, and stored only as its digest.
 */
export class ApplicationsService {
  constructor(
    private readonly storage: OAuthStorage,
    private readonly clock: Clock,
  ) {}

  async create(input: ApplicationInput, registrant: Registrant): Promise<ApplicationWithSecret> {
    const fields = this.validate(input, registrant);
    const secret = generateToken(TOKEN_PREFIX.clientSecret, OAUTH_DEFAULTS.secretBytes);
    const now = this.clock.now();
    const application = await this.storage.insertApplication({
      uid: randomBytes(32).toString('hex'),
      ...fields,
      secret_digest: digestToken(secret),
      owner_id: registrant.ownerId,
      created_at: now,
      updated_at: now,
    });
    return { application, secret };
  }

  /**
   * The owner's Edit form: name, redirect URIs, scopes and confidentiality, checked as at
   * registration. Tokens already issued keep the scopes they were granted.
   */
  async update(id: number, input: ApplicationInput, registrant: Registrant): Promise<ApplicationRow> {
    await this.owned(id, registrant.ownerId);
    const application = await this.storage.updateApplication(id, this.validate(input, registrant), this.clock.now());
    if (!application) throw new NotFoundError('Application');
    return application;
  }

  /** One application the user may manage (404 otherwise). */
  get(id: number, ownerId: number | null): Promise<ApplicationRow> {
    return this.owned(id, ownerId);
  }

  /** The applications the user authorized whose tokens still work. */
  authorizations(userId: number): Promise<Authorization[]> {
    return this.storage.listAuthorizations(userId, this.clock.now());
  }

  /**
   * Revokes what the user's consent to one application still grants: its tokens, unexchanged
   * codes and approved device grants. Its next authorization request asks for consent again.
   */
  async revokeAuthorization(userId: number, applicationId: number): Promise<void> {
    await this.storage.endApplicationAccess(userId, applicationId, this.clock.now());
  }

  private validate(input: ApplicationInput, registrant: Registrant): ApplicationChanges {
    const messages: ValidationMessages = {};
    const name = input.name.trim();
    if (name === '') messages.name = ["can't be blank"];
    else if (name.length > OAUTH_DEFAULTS.maxNameLength)
      messages.name = [`is too long (maximum is ${OAUTH_DEFAULTS.maxNameLength} characters)`];
    const { uris, problems } = parseRedirectUris(input.redirectUri);
    if (problems.length > 0) messages.redirect_uri = problems;
    const scopes = typeof input.scopes === 'string' ? parseScope(input.scopes) : [...new Set(input.scopes)];
    const allowed = registrableScopes(registrant.isAdmin);
    if (scopes === null || scopes.length === 0) messages.scopes = ["can't be blank"];
    else if (scopes.some((s) => !allowed.includes(s))) messages.scopes = ["doesn't match those configured on the server."];
    if (Object.keys(messages).length > 0 || scopes === null) throw new ValidationError(messages);
    return { name, redirect_uri: uris.join('\n'), scopes: joinScopes(scopes), confidential: input.confidential ? 1 : 0 };
  }

  /** All applications (`null`) or one user's. */
  list(ownerId: number | null): Promise<ApplicationRow[]> {
    return this.storage.listApplications(ownerId);
  }

  /** A page of every application, for the admin API. */
  page(limit: number, offset: number): Promise<{ rows: ApplicationRow[]; total: number }> {
    return this.storage.pageApplications(limit, offset);
  }

  /** Deleting an application cascades to its codes, tokens and device grants. */
  async remove(id: number, ownerId: number | null): Promise<void> {
    await this.owned(id, ownerId);
    await this.storage.deleteApplication(id);
  }

  async renewSecret(id: number, ownerId: number | null): Promise<ApplicationWithSecret> {
    await this.owned(id, ownerId);
    const secret = generateToken(TOKEN_PREFIX.clientSecret, OAUTH_DEFAULTS.secretBytes);
    const application = await this.storage.setApplicationSecret(id, digestToken(secret), this.clock.now());
    if (!application) throw new NotFoundError('Application');
    return { application, secret };
  }

  /** What a user cannot manage does not exist for them (CONVENTIONS.md rule 4). */
  private async owned(id: number, ownerId: number | null): Promise<ApplicationRow> {
    const application = await this.storage.findApplicationById(id);
    if (!application || (ownerId !== null && application.owner_id !== ownerId)) throw new NotFoundError('Application');
    return application;
  }
}
