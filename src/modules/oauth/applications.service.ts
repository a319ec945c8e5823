import { randomBytes } from 'node:crypto';
import { INSTANCE_SCOPE, SYSTEM_AUTHOR, auditAuthor, auditEntry, withSudo } from '../../infra/audit.js';
import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Database, Executor } from '../../infra/db/index.js';
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
  /** Who acts, for the audit trail. */
  by?: Actor | null;
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
    private readonly db: Database,
    private readonly bus: DomainEventBus,
  ) {}

  /**
   * `work` on the storage in a transaction that also holds the change's audit event (named
   * `eventName`, about the application `work` answers; nothing is published when it answers none).
   */
  private audited<T>(
    by: Actor | null | undefined,
    eventName: string,
    work: (storage: OAuthStorage) => Promise<T>,
    applicationOf: (result: T) => ApplicationRow | undefined,
  ): Promise<T> {
    return this.db.transaction().execute(async (trx: Executor) => {
      const result = await work(this.storage.on(trx));
      const application = applicationOf(result);
      if (application) await this.bus.publish(auditedApplication(by, eventName, application, this.clock.now()), trx);
      return result;
    });
  }

  async create(input: ApplicationInput, registrant: Registrant): Promise<ApplicationWithSecret> {
    const fields = this.validate(input, registrant);
    const secret = generateToken(TOKEN_PREFIX.clientSecret, OAUTH_DEFAULTS.secretBytes);
    const now = this.clock.now();
    const application = await this.audited(
      registrant.by,
      'oauth_application_created',
      (storage) =>
        storage.insertApplication({
          uid: randomBytes(32).toString('hex'),
          ...fields,
          secret_digest: digestToken(secret),
          owner_id: registrant.ownerId,
          created_at: now,
          updated_at: now,
        }),
      (row) => row,
    );
    return { application, secret };
  }

  /**
   * The owner's Edit form: name, redirect URIs, scopes and confidentiality, checked as at
   * registration. Tokens already issued keep the scopes they were granted.
   */
  async update(id: number, input: ApplicationInput, registrant: Registrant): Promise<ApplicationRow> {
    await this.owned(id, registrant.ownerId);
    const changes = this.validate(input, registrant);
    const application = await this.audited(
      registrant.by,
      'oauth_application_updated',
      (storage) => storage.updateApplication(id, changes, this.clock.now()),
      (row) => row,
    );
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
  async revokeAuthorization(userId: number, applicationId: number, by?: Actor | null): Promise<void> {
    const application = await this.storage.findApplicationById(applicationId);
    await this.audited(
      by,
      'oauth_authorization_revoked',
      (storage) => storage.endApplicationAccess(userId, applicationId, this.clock.now()),
      () => application,
    );
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
  async remove(id: number, ownerId: number | null, by?: Actor | null): Promise<void> {
    const application = await this.owned(id, ownerId);
    await this.audited(
      by,
      'oauth_application_deleted',
      (storage) => storage.deleteApplication(id),
      (deleted) => (deleted ? application : undefined),
    );
  }

  async renewSecret(id: number, ownerId: number | null, by?: Actor | null): Promise<ApplicationWithSecret> {
    await this.owned(id, ownerId);
    const secret = generateToken(TOKEN_PREFIX.clientSecret, OAUTH_DEFAULTS.secretBytes);
    const application = await this.audited(
      by,
      'oauth_application_secret_renewed',
      (storage) => storage.setApplicationSecret(id, digestToken(secret), this.clock.now()),
      (row) => row,
    );
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

/**
 * An application's audit event: about its owner (a user), or the instance for instance-wide
 * applications; it names the application, never its secret.
 */
function auditedApplication(by: Actor | null | undefined, eventName: string, application: ApplicationRow, at: number) {
  const author = by ? auditAuthor(by) : SYSTEM_AUTHOR;
  const owner = application.owner_id;
  const entry = auditEntry(author, {
    entityType: owner === null ? INSTANCE_SCOPE : 'User',
    entityId: owner ?? 1,
    entityPath: owner === null ? null : owner === author.authorId ? author.authorName : null,
    targetType: 'Doorkeeper::Application',
    targetId: application.id,
    targetDetails: application.name,
    eventName,
    details: withSudo({ scopes: application.scopes.split(' '), confidential: application.confidential === 1 }, by),
    at,
  });
  return { type: 'audited' as const, entry, at };
}
