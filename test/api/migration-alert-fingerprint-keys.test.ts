import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { migrateToLatest } from '../../src/infra/db/index.js';
import type { AnyDb } from '../../src/infra/db/migrations/helpers.js';
import { AlertsRepository } from '../../src/modules/alerts/alerts.repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

// 0012 finds open alerts by 64 bits of their fingerprint: alerts stored before it must still
// group their repeats, resolve, and stay one open alert per fingerprint.
describe('migration 0012_alert_fingerprint_keys on a database with alerts', () => {
  let database: TestDatabase;
  let projectId: number;
  const now = 1_700_000_000_000;
  const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
  const alert = (iid: number, fingerprint: string | null, status: 'triggered' | 'resolved') => ({
    project_id: projectId,
    iid,
    title: `alert ${iid}`,
    status,
    started_at: now,
    fingerprint,
    created_at: now,
    updated_at: now,
  });

  /** A new alert as the ingestion writes one: every column of the row. */
  const newAlert = (iid: number, fingerprint: string | null) => ({
    ...alert(iid, fingerprint, 'triggered'),
    integration_id: null,
    description: null,
    service: null,
    monitoring_tool: null,
    hosts: '[]',
    severity: 'critical',
    ended_at: null,
    events: 1,
    environment_name: null,
    runbook: null,
    full_query: null,
    y_label: null,
    incident_markdown: null,
    payload: '{}',
    custom_fields: '{}',
    issue_id: null,
  });

  before(async () => {
    database = await createTestDatabase({ upTo: '0011_error_fingerprint_keys' });
    // The schema at 0011: no fingerprint_key yet, so an untyped handle.
    const db = database.handle.db as AnyDb;
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
    projectId = Number(project.id);
    await db
      .insertInto('alerts')
      .values([
        alert(1, sha1('disk'), 'resolved'),
        alert(2, sha1('disk'), 'triggered'),
        alert(3, sha1('cpu'), 'triggered'),
        alert(4, null, 'triggered'),
        alert(5, null, 'triggered'),
      ])
      .execute();
    await migrateToLatest(database.handle.db, database.handle.dialect);
  });
  after(() => database.drop());

  const eventsOf = async (iid: number) =>
    Number((await database.handle.db.selectFrom('alerts').select('events').where('iid', '=', iid).executeTakeFirstOrThrow()).events);

  it('groups a repeat onto the open alert stored before, not the resolved one', async () => {
    const repo = new AlertsRepository(database.handle.db);
    const grouped = await repo.incrementOpen(projectId, sha1('disk'), now + 1);
    assert.equal(grouped?.iid, 2);
    assert.equal(await eventsOf(2), 2);
    assert.equal(await eventsOf(1), 1);
  });

  it('keeps one open alert per fingerprint: a second insert of an open fingerprint counts onto it', async () => {
    const repo = new AlertsRepository(database.handle.db);
    const head = await repo.insertOrIncrement(newAlert(6, sha1('cpu')));
    assert.equal(head.iid, 3);
    assert.equal(await eventsOf(3), 2);
    const rows = await database.handle.db.selectFrom('alerts').select('iid').where('iid', '=', 6).execute();
    assert.deepEqual(rows, []);
  });

  it('resolves the open alert stored before by its fingerprint, after which the fingerprint opens a new alert', async () => {
    const repo = new AlertsRepository(database.handle.db);
    const resolved = await repo.resolveOpen(projectId, sha1('cpu'), now + 2, now + 2);
    assert.equal(resolved?.iid, 3);
    const head = await repo.insertOrIncrement(newAlert(7, sha1('cpu')));
    assert.equal(head.iid, 7);
  });

  it('lets alerts without a fingerprint be open side by side', async () => {
    const repo = new AlertsRepository(database.handle.db);
    await repo.insert(newAlert(8, null));
    const open = await database.handle.db.selectFrom('alerts').select('iid').where('fingerprint', 'is', null).orderBy('iid').execute();
    assert.deepEqual(
      open.map((r) => r.iid),
      [4, 5, 8],
    );
  });
});
