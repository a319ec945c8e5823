import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { constantTimeEqual, generateToken } from '../../src/infra/crypto.js';

describe('generateToken', () => {
  it('gives distinct secrets of the asked size across many pool refills', () => {
    const seen = new Set<string>();
    // 1,000 tokens of 32 bytes span about eight refills of the 4 KB pool.
    for (let i = 0; i < 1000; i += 1) {
      const token = generateToken('bso_');
      assert.ok(token.startsWith('bso_'));
      assert.equal(Buffer.from(token.slice(4), 'base64url').length, 32);
      seen.add(token);
    }
    assert.equal(seen.size, 1000);
  });

  it('takes odd and large sizes (above the pool, drawn directly)', () => {
    for (const bytes of [1, 7, 33, 4095, 4096, 5000]) {
      assert.equal(Buffer.from(generateToken('', bytes), 'base64url').length, bytes);
    }
  });

  it('does not hand out runs of zero bytes (spent bytes are wiped, never reused)', () => {
    // A reused wiped region would decode to zero bytes; 16 random bytes are never all zero.
    for (let i = 0; i < 600; i += 1) assert.notEqual(Buffer.from(generateToken('', 16), 'base64url').toString('hex'), '0'.repeat(32));
  });
});

describe('constantTimeEqual', () => {
  it('is true only for the same text, whatever the lengths', () => {
    assert.equal(constantTimeEqual('a'.repeat(64), 'a'.repeat(64)), true);
    assert.equal(constantTimeEqual('a'.repeat(64), `${'a'.repeat(63)}b`), false);
    assert.equal(constantTimeEqual('abc', 'abcd'), false);
    assert.equal(constantTimeEqual('', ''), true);
    assert.equal(constantTimeEqual('', 'x'), false);
    // Same number of characters, different bytes (UTF-8): still compared, still unequal.
    assert.equal(constantTimeEqual('é', 'e'), false);
    assert.equal(constantTimeEqual('ünïcode', 'ünïcode'), true);
  });
});
