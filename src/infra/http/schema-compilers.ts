import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's validator and serializer compilers, kept for the whole process.
 *
 * Fastify makes new compilers for every app it builds, and compiling a few hundred route
 * schemas with Ajv and fast-json-stringify is most of the time an app takes to build. One
 * process builds several apps where the tests and the CLI run (each test suite
 * builds its own): here a schema equal to one compiled before, for the same part of the request
 * and with the same options, takes the function compiled then. A schema is known by its JSON,
 * since routes build equal schemas as new objects. Compiled functions hold no state of an app,
 * so sharing them changes nothing a request sees.
 */

type ValidatorFactory = ReturnType<typeof AjvCompiler>;
type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Compiler<F extends (...args: never[]) => unknown> = ReturnType<F>;

const pooledValidators = AjvCompiler();
const serializers = SerializerSelector();
/** Compiled functions by the key of their options, then by their schema's part and JSON. */
const compiled = new Map<string, Map<string, unknown>>();

function kept<T>(optionsKey: string, schemaKey: string, compile: () => T): T {
  let forOptions = compiled.get(optionsKey);
  if (!forOptions) compiled.set(optionsKey, (forOptions = new Map<string, unknown>()));
  const found = forOptions.get(schemaKey);
  if (found !== undefined) return found as T;
  const made = compile();
  forOptions.set(schemaKey, made);
  return made;
}

const buildValidator: ValidatorFactory = (externalSchemas, options) => {
  const compiler = pooledValidators(externalSchemas, options);
  const optionsKey = `v${JSON.stringify(externalSchemas)}${JSON.stringify(options?.customOptions ?? {})}`;
  const shared: Compiler<ValidatorFactory> = (route) =>
    kept(optionsKey, `${route.httpPart ?? ''}${JSON.stringify(route.schema)}`, () => compiler(route));
  return shared;
};

const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compiler = serializers(externalSchemas, options);
  const optionsKey = `s${JSON.stringify(externalSchemas)}${JSON.stringify(options)}`;
  const shared: Compiler<SerializerFactory> = (route) => kept(optionsKey, JSON.stringify(route.schema), () => compiler(route));
  return shared;
};

export const sharedSchemaCompilers = { buildValidator, buildSerializer };
