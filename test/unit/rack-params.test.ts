import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { MissingAttributeError } from '../../src/infra/errors/index.js';
import { AT_LEAST_ONE_OF, installParamCoercion, parseBooleanParam } from '../../src/infra/http/params.js';
import { parseRackParams } from '../../src/infra/http/rack-params.js';

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('parseRackParams (Rack normalize_params)', () => {
  it('reads arrays, hashes and arrays of hashes as Rack does', () => {
    const parsed = parseRackParams(
      'title=two&files[][file_path]=a.txt&files[][content]=first&files[][file_path]=b.txt&files[][content]=second&a[b][c]=1&a[b][d]=2&s%5B%5D=x&s%5B%5D=y+z',
    );
    assert.deepEqual(plain(parsed), {
      title: 'two',
      files: [
        { file_path: 'a.txt', content: 'first' },
        { file_path: 'b.txt', content: 'second' },
      ],
      a: { b: { c: '1', d: '2' } },
      s: ['x', 'y z'],
    });
  });

  it('keeps repeated plain keys as an array, like the parser without brackets', () => {
    assert.deepEqual(plain(parseRackParams('x=1&x=2&y[]=3')), { x: ['1', '2'], y: ['3'] });
    assert.deepEqual(plain(parseRackParams('x=1&x=2')), { x: ['1', '2'] });
  });

  it('gives objects without a prototype and drops __proto__ keys', () => {
    const parsed = parseRackParams('__proto__[polluted]=1&a[__proto__][b]=2&c[]=1');
    assert.equal(Object.getPrototypeOf(parsed), null);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(plain(parsed), { a: {}, c: ['1'] });
  });

  it('refuses a key that is both a hash and an array, and nesting deeper than Rack allows', () => {
    assert.throws(() => parseRackParams('a[b]=1&a[]=2'), /400 Bad request/);
    assert.throws(() => parseRackParams(`a${'[x]'.repeat(40)}=1`), /nest too deeply/);
  });
});

describe('parseBooleanParam (dry-types Params::Bool)', () => {
  it('accepts the lower, Capitalised and UPPER spellings only', () => {
    for (const yes of ['true', 'True', 'TRUE', 't', 'T', '1', 'on', 'On', 'yes', 'YES', 'y', 'Y', 1, true])
      assert.equal(parseBooleanParam(yes), true, String(yes));
    for (const no of ['false', 'False', 'FALSE', 'f', '0', 'off', 'no', 'N', 0, false])
      assert.equal(parseBooleanParam(no), false, String(no));
    for (const bad of ['tRUE', 'maybe', '', 2, {}]) assert.equal(parseBooleanParam(bad), undefined, JSON.stringify(bad));
  });
});

describe('parameter coercion of a route (Grape booleans, at_least_one_of)', () => {
  type Step = (request: { query: unknown; body: unknown }, reply: unknown, done: (error?: Error) => void) => void;
  /** The preValidation steps installParamCoercion gives a route with these schemas. */
  function stepsFor(schema: { querystring?: object; body?: object }, existing?: Step): Step[] {
    let onRoute: ((route: Record<string, unknown>) => void) | undefined;
    installParamCoercion({ addHook: (_name: string, hook: typeof onRoute) => (onRoute = hook) } as unknown as FastifyInstance);
    const route: Record<string, unknown> = { schema, preValidation: existing };
    onRoute?.(route);
    return (route.preValidation as Step[] | undefined) ?? [];
  }
  function run(steps: Step[], request: { query?: unknown; body?: unknown }): Error | undefined {
    let failure: Error | undefined;
    steps[0]?.({ query: request.query, body: request.body }, {}, (error) => (failure = error));
    return failure;
  }

  it('rewrites boolean spellings of the query and the body, and leaves other values to validation', () => {
    const steps = stepsFor({
      querystring: { type: 'object', properties: { archived: { type: 'boolean' }, name: { type: 'string' } } },
      body: { type: 'object', properties: { flags: { type: 'array', items: { anyOf: [{ type: 'boolean' }, { type: 'null' }] } } } },
    });
    const query = { archived: 'Yes', name: 'true' };
    const body = { flags: ['0', 'on', 'maybe'] };
    assert.equal(run(steps, { query, body }), undefined);
    assert.deepEqual(query, { archived: true, name: 'true' });
    assert.deepEqual(body, { flags: [false, true, 'maybe'] });
  });

  it('refuses a request giving none of an at_least_one_of group, naming them all', () => {
    const steps = stepsFor({ body: { type: 'object', [AT_LEAST_ONE_OF]: ['name', 'path'], properties: { name: { type: 'string' } } } });
    const error = run(steps, { body: {} });
    assert.ok(error instanceof MissingAttributeError);
    assert.equal(error.status, 400);
    assert.equal(error.message, 'name, path are missing, at least one parameter must be provided');
    assert.equal(run(steps, { body: { path: 'p' } }), undefined);
  });

  it('adds no step to a route with nothing to coerce, and runs before the route’s own steps', () => {
    assert.deepEqual(stepsFor({ querystring: { type: 'object', properties: { page: { type: 'integer' } } } }), []);
    const own: Step = (_request, _reply, done) => done();
    const steps = stepsFor({ querystring: { type: 'object', properties: { all: { type: 'boolean' } } } }, own);
    assert.equal(steps.length, 2);
    assert.equal(steps[1], own);
  });
});
