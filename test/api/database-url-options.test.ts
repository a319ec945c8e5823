import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../src/infra/db/index.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../helpers/database.js';

/**
 * DATABASE_URL's own `options` (a statement timeout, say) hold together with the schema Basalt
 * sets with DATABASE_SCHEMA: the schema's search path is added to them, not put in their place.
 */
describe(
  'DATABASE_URL options with a schema (PostgreSQL)',
  { skip: testDialect() !== 'postgres' && 'needs BASALT_TEST_DB=postgres' },
  () => {
    let database: TestDatabase;
    let handle: DatabaseHandle;
    before(async () => {
      database = await createTestDatabase();
      const url = new URL(database.databaseUrl as string);
      url.searchParams.set('options', '-c statement_timeout=4321');
      handle = openDatabase({ databaseUrl: url.toString(), sqliteFile: database.sqliteFile, schema: database.schema });
    });
    after(async () => {
      await handle.close();
      await database.drop();
    });

    it('keeps the URL options and sets the search path', async () => {
      const timeout = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(handle.db);
      assert.equal(timeout.rows[0]?.statement_timeout, '4321ms');
      const schema = await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db);
      assert.equal(schema.rows[0]?.schema, database.schema);
    });
  },
);
