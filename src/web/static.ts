import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The one stylesheet, read once; in dist/ it sits beside this file after the build copies it. */
function loadCss(): string {
  for (const candidate of [path.join(here, 'basalt.css'), path.join(here, '..', '..', 'src', 'web', 'basalt.css')]) {
    try {
      return readFileSync(candidate, 'utf8');
    } catch {
      // try the next place
    }
  }
  return '';
}

export function staticRoutes(app: FastifyInstance): void {
  const css = loadCss();
  app.get('/-/static/basalt.css', { config: { policy: { auth: 'none' } } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css),
  );
}
