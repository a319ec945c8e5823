import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { MissingAttributeError } from '../errors/index.js';

/**
 * Parameter coercion as Grape does it (issue 19), for the query string, form bodies and JSON
 * alike. Each route's querystring and body schemas are read once, when the route is added, into
 * a small function that rewrites only what ajv cannot: Grape's boolean spellings and its
 * "at least one of" rule. Routes whose schemas have neither get no hook at all, so the hot
 * paths pay nothing. Integers given as strings, single values for arrays and `key[]=` forms are
 * handled by ajv's `coerceTypes: 'array'` and the Rack-style parser (rack-params.ts).
 */

/**
 * Schema annotation: at least one of these properties must be given (Grape `at_least_one_of`);
 * otherwise 400 `"<a>, <b> are missing, at least one parameter must be provided"`.
 */
export const AT_LEAST_ONE_OF = 'x-at-least-one-of';

// dry-types Params::Bool, which Grape's `type: Boolean` uses (reference "Boolean coercion").
const TRUE_VALUES = new Set(['true', '1', 'on', 't', 'y', 'yes']);
const FALSE_VALUES = new Set(['false', '0', 'off', 'f', 'n', 'no']);

/** true/false/null, or undefined when the value is not a boolean in any accepted form. */
export function parseBooleanParam(value: unknown): boolean | null | undefined {
  if (value === null) return null;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : undefined;
  if (typeof value !== 'string') return undefined;
  // The accepted spellings are lower, Capitalised or UPPER case; mixed case is not a boolean.
  const lower = value.toLowerCase();
  const cased = value === lower || value === lower.toUpperCase() || value === lower[0]?.toUpperCase() + lower.slice(1);
  if (!cased) return undefined;
  if (TRUE_VALUES.has(lower)) return true;
  if (FALSE_VALUES.has(lower)) return false;
  return undefined;
}

interface SchemaNode {
  type?: unknown;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  [AT_LEAST_ONE_OF]?: readonly string[];
}

type Coerce = (value: unknown) => unknown;

/** A value that is not a boolean in any form is left alone; ajv then reports it invalid. */
const coerceBoolean: Coerce = (value) =>
  typeof value === 'string' || typeof value === 'number' ? (parseBooleanParam(value) ?? value) : value;

const hasType = (schema: SchemaNode, type: string) => schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));

function isBooleanSchema(schema: SchemaNode): boolean {
  if (hasType(schema, 'boolean')) return !hasType(schema, 'string');
  const branches = schema.anyOf ?? [];
  return branches.some((branch) => hasType(branch, 'boolean')) && !branches.some((branch) => hasType(branch, 'string'));
}

const compiled = new WeakMap<SchemaNode, Coerce | null>();

function compile(schema: SchemaNode): Coerce | null {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  compiled.set(schema, null); // a recursive schema coerces nothing below its first visit
  let coerce: Coerce | null = null;
  if (isBooleanSchema(schema)) {
    coerce = coerceBoolean;
  } else if (schema.items) {
    const item = compile(schema.items);
    if (item) coerce = (value) => (Array.isArray(value) ? value.map(item) : item(value));
  } else if (schema.properties) {
    const fields = Object.entries(schema.properties).flatMap(([name, child]) => {
      const fn = compile(child);
      return fn ? [[name, fn] as const] : [];
    });
    const required = schema[AT_LEAST_ONE_OF];
    if (fields.length > 0 || required) {
      coerce = (value) => {
        const object = (value ?? {}) as Record<string, unknown>;
        if (required && typeof object === 'object' && required.every((name) => object[name] === undefined)) {
          throw new MissingAttributeError(required, true);
        }
        if (typeof object !== 'object' || Array.isArray(object)) return value;
        for (const [name, fn] of fields) if (object[name] !== undefined) object[name] = fn(object[name]);
        return value;
      };
    }
  }
  compiled.set(schema, coerce);
  return coerce;
}

/** Adds, to each route whose querystring or body schema needs it, one preValidation step. */
export function installParamCoercion(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { querystring?: SchemaNode; body?: SchemaNode } | undefined;
    const query = schema?.querystring ? compile(schema.querystring) : null;
    const body = schema?.body ? compile(schema.body) : null;
    if (!query && !body) return;
    const coerce: preValidationHookHandler = (request, _reply, done) => {
      try {
        if (query) query(request.query);
        if (body) body(request.body);
        done();
      } catch (error) {
        done(error as Error);
      }
    };
    const existing =
      route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    route.preValidation = [coerce, ...existing];
  });
}
