import type { FastifyInstance } from 'fastify';
import { parse as parseFlat } from 'fast-querystring';
import { BadRequestError } from '../errors/index.js';

/** Rack's own bound on `a[b][c]…` nesting (`Rack::Utils.param_depth_limit`). */
const MAX_PARAM_DEPTH = 32;
/**
 * Rack's bound on the number of parameters (`QueryParser` `params_limit`, 4096 since the fix of
 * CVE-2025-46727): 90,000 `a[]=1` in a 1 MiB form cost 100 ms and tens of MiB each (issue 18).
 */
export const MAX_PARAMS = 4096;

/** Refuses a text of more than MAX_PARAMS `&`-separated pairs, counted before anything is built. */
function checkParamCount(text: string): void {
  let pairs = 1;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) {
    pairs += 1;
    if (pairs > MAX_PARAMS) throw new BadRequestError(`400 Bad request - too many parameters (at most ${MAX_PARAMS})`);
  }
}

type Params = Record<string, unknown>;

const newParams = (): Params => Object.create(null) as Params;
const isParams = (value: unknown): value is Params => typeof value === 'object' && value !== null && !Array.isArray(value);

function decode(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  const spaced = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

function typeError(key: string): BadRequestError {
  return new BadRequestError(`400 Bad request - expected a different type for the parameter \`${key}\``);
}

/** Rack's `params_hash_has_key?`: whether `a[b]` already has a value inside `hash`. */
function hasKey(hash: Params, key: string): boolean {
  if (key.includes('[]')) return false;
  let node: unknown = hash;
  for (const part of key.split(/[[\]]+/)) {
    if (part === '') continue;
    if (!isParams(node) || !(part in node)) return false;
    node = node[part];
  }
  return true;
}

/**
 * Rack's `normalize_params` (rack/query_parser.rb): `a[]=1` appends to an array, `a[b]=1` nests a
 * hash, and `a[][b]=1&a[][c]=2` fills the last hash of the array until a key repeats, which
 * starts the next one. A plain key given twice becomes an array, as Fastify's own parser does.
 */
function normalize(params: Params, name: string, value: unknown, depth: number): unknown {
  if (depth >= MAX_PARAM_DEPTH) throw new BadRequestError('400 Bad request - parameters nest too deeply');
  let key: string;
  let after: string;
  if (depth === 0) {
    const start = name.indexOf('[', 1);
    [key, after] = start > 0 ? [name.slice(0, start), name.slice(start)] : [name, ''];
  } else if (name.startsWith('[]')) {
    [key, after] = ['[]', name.slice(2)];
  } else if (name.startsWith('[') && name.indexOf(']', 1) > 0) {
    const end = name.indexOf(']', 1);
    [key, after] = [name.slice(1, end), name.slice(end + 1)];
  } else {
    [key, after] = [name, ''];
  }
  if (key === '' || key === '__proto__') return params;
  if (after === '') {
    if (key === '[]' && depth !== 0) return [value];
    const existing = params[key];
    // Appended in place: a copy per repeat would be quadratic in a hostile form's repeats.
    if (depth === 0 && Array.isArray(existing)) existing.push(value);
    else if (depth === 0 && existing !== undefined) params[key] = [existing, value];
    else params[key] = value;
  } else if (after === '[') {
    params[name] = value;
  } else if (after === '[]') {
    const list = (params[key] ??= []);
    if (!Array.isArray(list)) throw typeError(key);
    list.push(value);
  } else if (after.startsWith('[]')) {
    const inner = after.slice(3, -1);
    const child = after[2] === '[' && after.endsWith(']') && inner !== '' && !/[[\]]/.test(inner) ? inner : after.slice(2);
    const list = (params[key] ??= []);
    if (!Array.isArray(list)) throw typeError(key);
    const last: unknown = list[list.length - 1];
    if (isParams(last) && !hasKey(last, child)) normalize(last, child, value, depth + 1);
    else list.push(normalize(newParams(), child, value, depth + 1));
  } else {
    const hash = (params[key] ??= newParams());
    if (!isParams(hash)) throw typeError(key);
    params[key] = normalize(hash, after, value, depth + 1);
  }
  return params;
}

const BRACKET = /\[|%5b/i;

/**
 * Query strings and form bodies as Rack reads them for Grape (issue 19): `scopes[]=api`,
 * `key[sub]=v` and `files[][file_path]=…`. A string without a bracket, the common case and the
 * hot path, is left to fast-querystring. Objects have no prototype, so no key reaches one.
 */
export function parseRackParams(text: string): Params {
  checkParamCount(text);
  if (!BRACKET.test(text)) return parseFlat(text) as Params;
  const params = newParams();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(eq < 0 ? pair : pair.slice(0, eq));
    normalize(params, name, eq < 0 ? '' : decode(pair.slice(eq + 1)), 0);
  }
  return params;
}

/** Where parseRackQuery leaves the error of a query string it could not read. */
export const QUERY_ERROR = Symbol('queryError');

/**
 * The router's query string parser. It runs inside routing, where a throw is an uncaught
 * exception that ends the process, so a refusal (too many parameters, too deep) is left on the
 * result for the first hook to throw (app.ts), which answers it as any 400.
 */
export function parseRackQuery(text: string): Params {
  try {
    return parseRackParams(text);
  } catch (error) {
    const params = newParams();
    Object.defineProperty(params, QUERY_ERROR, { value: error });
    return params;
  }
}

/** The refusal parseRackQuery left on a request's query, if any. */
export function queryError(query: unknown): Error | undefined {
  return (query as { [QUERY_ERROR]?: Error } | null)?.[QUERY_ERROR];
}

/**
 * `/api/v4` form bodies through the same parser. Only there: the pages' and OAuth's forms are
 * our own HTML forms and RFC 6749 bodies, whose names (`user[login]`) are read flat.
 */
export function installRackForms(api: FastifyInstance, bodyLimit: number): void {
  api.removeContentTypeParser('application/x-www-form-urlencoded');
  api.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    try {
      done(null, parseRackParams(String(body)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
