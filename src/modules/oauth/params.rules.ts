import { InvalidRequestError } from '../../infra/errors/index.js';
import { OAUTH_DEFAULTS } from './oauth.defaults.js';

/** Request parameters of an OAuth endpoint: each name at most once, strings only. */
export type OAuthParams = ReadonlyMap<string, string>;

/**
 * RFC 6749 §3.1 and §3.2: "Request and response parameters MUST NOT be included more than
 * once" and "parameters sent without a value MUST be treated as if they were omitted".
 */
export function readParams(...sources: unknown[]): OAuthParams {
  const params = new Map<string, string>();
  for (const source of sources) {
    if (source === undefined || source === null) continue;
    if (typeof source !== 'object' || Array.isArray(source))
      throw new InvalidRequestError('The request body must be form-encoded parameters.');
    for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
      if (Array.isArray(value) || params.has(name)) throw new InvalidRequestError(`Parameter ${name} is included more than once.`);
      if (value === undefined || value === null || value === '') continue;
      if (typeof value !== 'string') throw new InvalidRequestError(`Parameter ${name} must be a string.`);
      if (value.length > OAUTH_DEFAULTS.maxParameterLength) throw new InvalidRequestError(`Parameter ${name} is too long.`);
      params.set(name, value);
    }
  }
  return params;
}

export function requireParam(params: OAuthParams, name: string): string {
  const value = params.get(name);
  if (value === undefined) throw new InvalidRequestError(`Missing required parameter: ${name}.`);
  return value;
}
