import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { digestToken } from '../../src/infra/crypto.js';
import { formatToken, newTokenSecret, parseToken, provesToken } from '../../src/modules/oauth/token-format.rules.js';

describe('OAuth token format bso_<id>_<secret>', () => {
  it('round-trips id, kind and the digest of the secret, whose base64url text may contain _', () => {
    const { secret, digest } = newTokenSecret();
    assert.equal(secret.length, 43);
    const withUnderscore = `ab_cd${secret.slice(5)}`;
    const parsed = parseToken(formatToken('refresh', 42, withUnderscore));
    assert.deepEqual(parsed, { kind: 'refresh', id: 42, digest: digestToken(withUnderscore) });
    const access = parseToken(formatToken('access', 7, secret));
    assert.ok(access && provesToken(access, digest));
    assert.equal(provesToken(access, digestToken(`${secret}x`)), false);
    assert.equal(provesToken(access, null), false);
  });

  it('refuses what is not a token of ours', () => {
    for (const text of [
      'bso_',
      'bso_abc',
      'bso_12',
      'bso__secret',
      'bso_012_secret',
      'bso_-1_secret',
      'bso_1.5_secret',
      'bso_12345678901234567_secret',
      'bsp_12_secret',
      'glpat-12_secret',
      `bso_1_${'x'.repeat(5000)}`,
    ]) {
      assert.equal(parseToken(text), null, text);
    }
  });
});
