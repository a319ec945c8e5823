import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runSoak } from '../../scripts/soak.js';

/**
 * The CI-bounded soak (issue 10, deliverable 4): `npm run soak` runs 5 minutes; this runs the
 * same mix (authenticated GETs, alert and envelope ingestion) against the built server for
 * 20 s at a steady rate and checks that nothing failed and memory stayed bounded.
 */
describe('soak (bounded)', () => {
  it('20 s of steady mixed load: no 5xx, no unexpected errors, RSS bounded', { timeout: 120_000 }, async () => {
    const report = await runSoak({ seconds: 20, rate: 100, sampleSeconds: 2, rssTolerance: 0.2 });
    assert.ok(report.requests > 1500, `${report.requests} requests`);
    assert.equal(report.serverErrors, 0, JSON.stringify(report.statuses));
    assert.equal(report.errors, 0, JSON.stringify(report.statuses));
    assert.ok(report.memoryFlat, `RSS ${report.rssSecond} MiB -> ${report.rssLast} MiB (${report.rssMiB.join(', ')})`);
    assert.ok(report.rssLast < 512, `RSS ${report.rssLast} MiB stays bounded`);
  });
});
