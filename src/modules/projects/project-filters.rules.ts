import type { Static } from '@sinclair/typebox';
import type { Actor } from '../../infra/auth/index.js';
import { AccessLevel } from './access.policy.js';
import type { ProjectEntity, ProjectSimpleEntity } from './entities.schemas.js';
import type { ProjectFilter } from './projects.repository.js';
import type { ListProjectsQuery } from './projects.schemas.js';

/**
 * Every filter `GET /projects` and `GET /groups/:id/projects` declare, applied (issue 19: a
 * declared filter is never ignored). `owned` is the caller's personal namespace and what they
 * reach with Owner access (the established product's `owned_projects`); `membership` is any
 * level. Listing by storage is for administrators verifying moves; for others that filter is
 * ignored, as in the established product (reference §3.6).
 */
export function projectFilter(
  query: Static<typeof ListProjectsQuery>,
  actor: Actor | null,
  now: number,
): Omit<ProjectFilter, 'namespaceIds'> {
  const userId = actor?.user.id ?? null;
  return {
    search: query.search,
    visibility: query.visibility,
    repositoryStorage: actor?.user.isAdmin ? query.repository_storage : undefined,
    memberOf: [
      ...(query.owned ? [{ userId, minAccess: AccessLevel.OWNER, now }] : []),
      ...(query.membership ? [{ userId, minAccess: 0, now }] : []),
    ],
    orderBy: query.order_by ?? 'created_at',
    sort: query.sort ?? 'desc',
  };
}

/** `simple=true`: the established product's `BasicProjectDetails` fields only. */
const SIMPLE_FIELDS = [
  'id',
  'description',
  'name',
  'name_with_namespace',
  'path',
  'path_with_namespace',
  'created_at',
  'default_branch',
  'tag_list',
  'topics',
  'http_url_to_repo',
  'web_url',
  'readme_url',
  'forks_count',
  'avatar_url',
  'star_count',
  'last_activity_at',
  'namespace',
] as const;

export function simpleProject(project: ProjectEntity): ProjectSimpleEntity {
  return Object.fromEntries(SIMPLE_FIELDS.map((key) => [key, project[key]])) as ProjectSimpleEntity;
}
