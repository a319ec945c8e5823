import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const here = path.dirname(fileURLToPath(import.meta.url));

/** A file served as is, read once; in dist/ it sits beside this file after the build copies it. */
function loadAsset(name: string): string {
  for (const candidate of [path.join(here, name), path.join(here, '..', '..', 'src', 'web', name)]) {
    try {
      return readFileSync(candidate, 'utf8');
    } catch {
      // try the next place
    }
  }
  return '';
}

/** The one script (progressive enhancement only: copy buttons), plain ES with no build step. */
const script = loadAsset('basalt.js');
const scriptVersion = hash('sha256', script, 'base64url').slice(0, 12);

/**
 * The script's address as pages load it: its content hash in the query, so a browser may keep it
 * for a year and a new release's script is a new address.
 */
export const SCRIPT_URL = `/-/static/basalt.js?v=${scriptVersion}`;

const YEAR = 'public, max-age=31536000, immutable';

export function staticRoutes(app: FastifyInstance): void {
  const css = loadAsset('basalt.css');
  app.get('/-/static/basalt.css', { config: { policy: { auth: 'none' } } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css),
  );
  app.get<{ Querystring: { v?: string } }>('/-/static/basalt.js', { config: { policy: { auth: 'none' } } }, async (request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      // Another version's address (an old page after an upgrade) gets today's script, briefly cached.
      .header('cache-control', request.query.v === scriptVersion ? YEAR : 'public, max-age=300')
      .send(script),
  );
}
