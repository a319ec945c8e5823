import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonDepth, jsonTextTooDeep } from '../../src/infra/json-depth.js';

const nested = (levels: number, open = '[', close = ']') => `${open.repeat(levels)}${close.repeat(levels)}`;

describe('jsonTextTooDeep: nesting judged from the text (issue 18)', () => {
  it('agrees with the depth of the parsed value, at and past the limit', () => {
    for (const text of [
      nested(100),
      nested(101),
      `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`,
      `${'{"a":'.repeat(101)}1${'}'.repeat(101)}`,
    ]) {
      assert.equal(jsonTextTooDeep(text, 100), jsonDepth(JSON.parse(text), 100) > 100, text.slice(0, 12));
    }
    const wide = JSON.stringify(Array.from({ length: 500 }, () => ({ a: [1, { b: 2 }] })));
    assert.equal(jsonTextTooDeep(wide, 100), false, 'many brackets side by side are not deep');
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ a: `${'['.repeat(500)}\\"${'{'.repeat(500)}`, b: ['"', '\\', '[[[['] });
    assert.equal(jsonTextTooDeep(text, 100), false);
    assert.equal(jsonTextTooDeep(`["\\"", ${nested(101)}]`, 100), true);
  });
});
