import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/infra/auth/index.js';
import type { ProjectRow, NamespaceRow } from '../../src/modules/projects/index.js';
import type { UserRow } from '../../src/modules/identity/index.js';

let sequence = 0;
const next = () => `${Date.now().toString(36)}${(sequence += 1)}`;

export interface TestUser {
  user: UserRow;
  token: string;
  actor: Actor;
}

/** A user with a personal access token (scopes `api` unless given). */
export async function createUser(
  app: FastifyInstance,
  options: { admin?: boolean; scopes?: string[]; username?: string; privateProfile?: boolean } = {},
): Promise<TestUser> {
  const name = options.username ?? `user${next()}`;
  const user = await app.modules.identity.users.create({
    username: name,
    name: `User ${name}`,
    email: `${name}@example.com`,
    password: 'password-123',
    admin: options.admin ?? false,
    private_profile: options.privateProfile ?? false,
  });
  const { token } = await app.modules.identity.tokens.create(
    user.id,
    'personal',
    { name: 'test', scopes: options.scopes ?? ['api'] },
    { createdById: user.id },
  );
  return { user, token, actor: actorFor(user) };
}

export function actorFor(user: UserRow): Actor {
  return {
    user: { id: user.id, username: user.username, isAdmin: user.is_admin === 1, state: user.state, bot: user.bot === 1 },
    credential: { kind: 'personal_token', id: 0, scopes: ['api'] },
  };
}

export async function createGroup(
  app: FastifyInstance,
  owner: TestUser,
  options: { path?: string; parentId?: number; visibility?: string } = {},
): Promise<NamespaceRow> {
  const path = options.path ?? `group${next()}`;
  return app.modules.projects.groups.create(owner.actor, { name: path, path, parent_id: options.parentId, visibility: options.visibility });
}

export async function createProject(
  app: FastifyInstance,
  owner: TestUser,
  options: { path?: string; namespaceId?: number; visibility?: string } = {},
): Promise<ProjectRow> {
  const path = options.path ?? `project${next()}`;
  return app.modules.projects.projects.create(owner.actor, {
    name: path,
    path,
    namespace_id: options.namespaceId,
    visibility: options.visibility,
  });
}

export async function addMember(
  app: FastifyInstance,
  kind: 'namespace' | 'project',
  sourceId: number,
  user: TestUser,
  level: number,
): Promise<void> {
  const root = await app.modules.identity.users.findByUsername('root');
  if (!root) throw new Error('root is missing');
  const admin = actorFor(root);
  await app.modules.projects.members.add(
    admin,
    kind,
    sourceId,
    50,
    { user_id: user.user.id, access_level: level },
    kind === 'project' ? sourceId : null,
  );
}
