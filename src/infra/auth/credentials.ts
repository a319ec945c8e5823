import type { FastifyRequest } from 'fastify';

/** Where each kind of secret may arrive (reference auth-oauth-common.md §1.1). */
function firstString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

function queryParam(request: FastifyRequest, name: string): string | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  return query ? firstString(query[name]) : undefined;
}

export function header(request: FastifyRequest, name: string): string | undefined {
  return firstString(request.headers[name]);
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const value = header(request, 'authorization');
  const match = value ? /^Bearer\s+(\S+)\s*$/i.exec(value) : null;
  return match?.[1];
}

/** Basic credentials: any username; the password is the secret (git, alert keys). */
export function basicCredentials(request: FastifyRequest): { username: string; password: string } | undefined {
  const value = header(request, 'authorization');
  const match = value ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(value) : null;
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Doorkeeper's order: `access_token` parameter, then `Authorization: Bearer`. */
export function oauthStyleToken(request: FastifyRequest): string | undefined {
  return queryParam(request, 'access_token') ?? bearerToken(request);
}

/** `private_token` parameter, then `PRIVATE-TOKEN`, then the OAuth-style string. */
export function privateToken(request: FastifyRequest): string | undefined {
  return queryParam(request, 'private_token') ?? header(request, 'private-token') ?? oauthStyleToken(request);
}

export function jobTokenValue(request: FastifyRequest): string | undefined {
  return header(request, 'job-token') ?? queryParam(request, 'job_token');
}

export function sudoValue(request: FastifyRequest): string | undefined {
  return queryParam(request, 'sudo') ?? header(request, 'sudo');
}
