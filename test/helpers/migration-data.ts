import type { AnyDb } from '../../src/infra/db/migrations/helpers.js';

/**
 * A group `g` with a project `g/p`, written with an untyped handle: a migration test writes the
 * rows of the schema before the migration it tests, which the application's types no longer
 * describe. Returns the project's id.
 */
export async function insertProjectForMigration(db: AnyDb, now: number): Promise<number> {
  const namespace = await db
    .insertInto('namespaces')
    .values({ kind: 'group', name: 'g', path: 'g', full_path: 'g', full_path_lower: 'g', created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  const project = await db
    .insertInto('projects')
    .values({
      namespace_id: namespace.id,
      name: 'p',
      path: 'p',
      full_path: 'g/p',
      full_path_lower: 'g/p',
      repository_storage: 'default',
      last_activity_at: now,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(project.id);
}

/** An error row of the schema migrations 0005–0010 made (no fingerprint key). */
export function errorRowForMigration(projectId: number, fingerprint: string, now: number) {
  return {
    project_id: projectId,
    fingerprint,
    title: 'Error',
    name: 'Error',
    description: 'boom',
    culprit: 'here',
    platform: 'node',
    events_count: 1,
    first_seen_at: now,
    last_seen_at: now,
    issue_iid: null,
    created_at: now,
    updated_at: now,
  };
}

/** An event row of an error, received and occurred at `now` (a row without a time of its own). */
export function eventRowForMigration(projectId: number, errorId: number, eventId: string, now: number) {
  return {
    project_id: projectId,
    error_id: errorId,
    event_id: eventId,
    occurred_at: now,
    received_at: now,
    level: 'error',
    environment: null,
    release: null,
    user_identifier: null,
    description: 'boom',
    payload: '{}',
  };
}
