import type { FastifyInstance } from 'fastify';
import { BadRequestError } from '../errors/index.js';
import { jsonTextTooDeep } from '../json-depth.js';

/** Deeper than any client's request body; refused before parsing (hostile input, issue 18). */
export const MAX_JSON_BODY_DEPTH = 100;

/**
 * JSON bodies: an empty body reads as `{}` (clients send `Content-Type: application/json`
 * with nothing on bodiless calls), prototype keys are refused, and a syntax error is a 400.
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json']);
  const parse = (body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    if (jsonTextTooDeep(text, MAX_JSON_BODY_DEPTH)) {
      return done(new BadRequestError(`400 Bad request - the JSON body nests deeper than ${MAX_JSON_BODY_DEPTH} levels`), undefined);
    }
    try {
      // The reviver costs time, so it runs only when a body names `__proto__`.
      const parsed: unknown = text.includes('"__proto__"')
        ? JSON.parse(text, (key, value: unknown) => (key === '__proto__' ? undefined : value))
        : JSON.parse(text);
      done(null, parsed);
    } catch (error) {
      done(new BadRequestError(`400 Bad request - Malformed JSON body: ${(error as Error).message}`), undefined);
    }
  };
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => parse(body, done));
  app.addContentTypeParser(/^application\/[a-z.+-]*\+json$/, { parseAs: 'string' }, (_request, body, done) => parse(body, done));
}
