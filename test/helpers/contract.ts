import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import FindMyWay from 'find-my-way';

/**
 * The API contract as the test tier checks it (issue 19 item 7): every JSON answer a test
 * receives is validated against its operation's answer in the OpenAPI document. An operation is
 * checked once it declares a 2xx answer (openapi-contract.test.ts counts those still without):
 * then a 2xx status it does not declare fails, and a body that does not match the declared
 * schema fails, undeclared fields included (objects are closed here, while the document keeps
 * TypeBox's open objects for clients).
 */

type JsonSchema = Record<string, unknown>;
interface Operation {
  readonly id: string;
  readonly method: string;
  readonly path: string;
  readonly responses: Record<string, JsonSchema>;
}
export interface ContractAnswer {
  readonly method: string;
  readonly url: string;
  readonly statusCode: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const compiled = new Map<string, ValidateFunction>();

/** Objects with declared properties and nothing said of others are closed; allOf closes at its own level. */
function closed(schema: unknown, inAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => closed(s, inAllOf));
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'allOf') out[key] = (value as unknown[]).map((s) => closed(s, true));
    else if (key === 'properties' || key === 'patternProperties' || key === '$defs')
      out[key] = Object.fromEntries(Object.entries(value as JsonSchema).map(([k, v]) => [k, closed(v)]));
    else if (key === 'const' || key === 'enum' || key === 'default' || key === 'examples') out[key] = value;
    else out[key] = closed(value);
  }
  const open = 'additionalProperties' in source || 'unevaluatedProperties' in source || 'patternProperties' in source;
  if (!open && ((source.properties && !inAllOf) || source.allOf)) out.unevaluatedProperties = false;
  return out;
}

function validatorFor(schema: JsonSchema, components: JsonSchema): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    // Components travel with each schema so that `$ref: #/components/...` resolves.
    validate = ajv.compile({ ...(closed(schema) as JsonSchema), components });
    compiled.set(key, validate);
  }
  return validate;
}

/**
 * The router paths of a document path. A `{…full_path}` parameter spans its slashes (the alert
 * receiver's `/{project_full_path}/…`, registered once per depth, 2 to 21 segments), and such a
 * route also takes a `.json` suffix after a static last segment.
 */
function routesOf(path: string): string[] {
  const route = path.replace(/\{([^}]+)\}/g, ':$1');
  const spanning = /^\/:(\w*full_path)(?=\/)/.exec(route);
  if (!spanning) return [route];
  const rest = route.slice(spanning[0].length);
  const tails = /\/[\w-]+$/.test(rest) ? [rest, `${rest}.json`] : [rest];
  return Array.from({ length: 21 }, (_, depth) => Array.from({ length: depth + 1 }, (__, i) => `/:s${i}`).join('')).flatMap((head) =>
    tails.map((tail) => head + tail),
  );
}

export class ContractValidator {
  private readonly router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 1024 });
  private readonly components: JsonSchema;

  constructor(document: JsonSchema) {
    this.components = (document.components ?? {}) as JsonSchema;
    const paths = document.paths as Record<string, Record<string, JsonSchema>>;
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        const operation: Operation = {
          id: String(op.operationId),
          method: method.toUpperCase(),
          path,
          responses: (op.responses ?? {}) as Record<string, JsonSchema>,
        };
        for (const route of routesOf(path)) this.router.on(operation.method as 'GET', route, () => undefined, operation);
      }
    }
  }

  /** The problem with an answer, or null when it keeps the contract (or its operation is not checked yet). */
  problem(answer: ContractAnswer): string | null {
    if (!answer.contentType || !/^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(answer.contentType)) return null;
    const path = answer.url.split('?')[0] ?? '';
    const found = this.router.find(answer.method.toUpperCase() as 'GET', path);
    const operation = found?.store as Operation | undefined;
    if (!operation) return null;
    const declared = Object.keys(operation.responses).filter((status) => /^2/.test(status));
    if (declared.length === 0) return null;
    const status = String(answer.statusCode);
    const response =
      operation.responses[status] ??
      operation.responses[`${status[0]}XX`] ??
      (status.startsWith('2') ? undefined : operation.responses.default);
    const where = `${operation.id} (${operation.method} ${operation.path}) answered ${status}`;
    if (!response)
      return status.startsWith('2')
        ? `${where}, a status its OpenAPI operation does not declare (it declares ${declared.join(', ')})`
        : null;
    const resolved = this.resolve(response);
    const schema = (resolved.content as Record<string, { schema?: JsonSchema }> | undefined)?.['application/json']?.schema;
    if (!schema) return answer.body.length > 0 ? `${where} with a JSON body, but its OpenAPI response declares none` : null;
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return `${where} with a body that is not JSON: ${answer.body.slice(0, 200)}`;
    }
    const validate = validatorFor(schema, this.components);
    if (validate(body)) return null;
    const errors = (validate.errors ?? []).slice(0, 10).map((e) => {
      const field = e.instancePath || '(the body)';
      const extra =
        e.keyword === 'unevaluatedProperties'
          ? ` "${String((e.params as { unevaluatedProperty?: string }).unevaluatedProperty)}" (not in the schema)`
          : '';
      return `  at ${field}: ${e.message ?? e.keyword}${extra}`;
    });
    return `${where} with a body its OpenAPI response schema refuses:\n${errors.join('\n')}`;
  }

  private resolve(response: JsonSchema): JsonSchema {
    const ref = response.$ref;
    if (typeof ref !== 'string') return response;
    const [, , kind, name] = ref.split('/');
    return (this.components[kind ?? ''] as Record<string, JsonSchema> | undefined)?.[name ?? ''] ?? {};
  }
}
