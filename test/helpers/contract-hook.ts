import { AssertionError } from 'node:assert';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { ContractValidator } from './contract.js';

/** One validator per distinct document (every app of a run builds the same one). */
const validators = new Map<string, ContractValidator>();

/**
 * The one hook of issue 19 item 7: every answer a test gets through `app.inject` (and so through
 * `t.api`) is checked against the app's OpenAPI document (contract.ts); a broken contract
 * rejects the inject with an AssertionError naming the operation and the field.
 */
export function checkContract(app: FastifyInstance): void {
  const inject = app.inject.bind(app) as (options: InjectOptions | string) => Promise<LightMyRequestResponse>;
  let validator: Promise<ContractValidator> | null = null;
  const load = async () => {
    const body = (await inject({ method: 'GET', url: '/api/v4/openapi.json' })).body;
    let found = validators.get(body);
    if (!found) {
      found = new ContractValidator(JSON.parse(body) as Record<string, unknown>);
      validators.set(body, found);
    }
    return found;
  };
  const checked = async (options: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const response = await inject(options);
    const request = response.raw.req;
    const contentType = response.headers['content-type'];
    validator ??= load();
    const problem = (await validator).problem({
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      statusCode: response.statusCode,
      contentType: typeof contentType === 'string' ? contentType : undefined,
      body: response.body,
    });
    if (problem) throw new AssertionError({ message: `API contract: ${problem}` });
    return response;
  };
  const original = app.inject.bind(app) as (...args: unknown[]) => unknown;
  // Only the promise form is checked; the callback and chain forms are passed through untouched.
  app.inject = ((...args: unknown[]) =>
    args.length === 1 && args[0] !== undefined
      ? checked(args[0] as InjectOptions | string)
      : original(...args)) as FastifyInstance['inject'];
}
