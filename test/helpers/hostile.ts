import fc from 'fast-check';

/** Generators of hostile input shared by the fuzz suite and `npm run hostile-rss`. */

export const hostileSegment = fc.oneof(
  fc.constantFrom(
    "1' OR '1'='1",
    '1;DROP TABLE users',
    '..',
    '../..',
    '%2e%2e%2f',
    'a%2Fb%2F..',
    '99999999999999999999999',
    '-1',
    '0',
    '1e3',
    '%00',
    'root',
    'null',
    '%E0%A4%A',
  ),
  fc.string({ maxLength: 40 }).map((s) => encodeURIComponent(s)),
  fc.nat().map(String),
);

const jsonValue = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.record({
    name: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    path: fc.oneof(fc.string(), fc.array(fc.string())),
    title: fc.oneof(fc.string(), fc.boolean()),
  }),
  fc.nat({ max: 300 }).map((depth) => {
    let value: unknown = 1;
    for (let i = 0; i < depth; i += 1) value = { a: value };
    return value;
  }),
);

export const hostileBody = fc.oneof(
  jsonValue.map((v) => ({ payload: JSON.stringify(v), type: 'application/json' })),
  jsonValue.map((v) => ({ payload: JSON.stringify(v).slice(0, -1), type: 'application/json' })),
  fc.string({ maxLength: 200 }).map((s) => ({ payload: s, type: 'application/json' })),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ payload: Buffer.from(bytes), type: 'application/json' })),
  fc.constant({ payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff]), type: 'application/json', encoding: 'gzip' }),
  fc.string({ maxLength: 100 }).map((s) => ({ payload: `a=${encodeURIComponent(s)}&a=2`, type: 'application/x-www-form-urlencoded' })),
  fc.string({ maxLength: 50 }).map((s) => ({ payload: s, type: 'text/plain' })),
);

export const hostileQuery = fc.array(
  fc.tuple(fc.constantFrom('page', 'per_page', 'sort', 'order_by', 'search', 'id', 'state', 'scope', 'sudo'), hostileSegment),
  { maxLength: 4 },
);

const many = (n: number, item: string, sep = ',') => Array.from({ length: n }, () => item).join(sep);

/**
 * Bodies near the body limit (1 MiB): huge arrays, objects of many keys, long strings, deep
 * nesting, forms of many fields. Built once; each costs the server memory while it is parsed.
 */
export const heavyBody = fc.constantFrom(
  { payload: `[${many(400_000, '0')}]`, type: 'application/json' },
  { payload: `{${Array.from({ length: 40_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`, type: 'application/json' },
  { payload: JSON.stringify({ name: 'x'.repeat(1_000_000), title: 'y', path: 'z' }), type: 'application/json' },
  { payload: `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, type: 'application/json' },
  { payload: `${'['.repeat(400_000)}${']'.repeat(400_000)}`, type: 'application/json' },
  { payload: many(90_000, 'a[]=1', '&'), type: 'application/x-www-form-urlencoded' },
  { payload: many(60_000, 'a[b][c]=1', '&'), type: 'application/x-www-form-urlencoded' },
  { payload: JSON.stringify({ name: many(100_000, '"\\u00e9"') }), type: 'application/json' },
);
