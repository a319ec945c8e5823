/**
 * A small program compiled against the client types generated from docs/openapi.json
 * (`npm run openapi:client`, issue 19 item 7): if the document stops describing the
 * parameters, bodies or answers used here, this stops compiling. It is type-checked, not run.
 */
import type { paths } from './generated/basalt-api.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type Parameters<O> = O extends { parameters: infer T } ? T : never;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Json<R> = R extends { content: { 'application/json': infer J } } ? J : never;
/** The JSON of the operation's 2xx answers. */
type Success<O> = O extends { responses: infer R } ? { [S in keyof R]: S extends 200 | 201 | 202 ? Json<R[S]> : never }[keyof R] : never;

interface Call<P extends keyof paths, M extends Method> {
  params: Parameters<Operation<P, M>>;
  body?: Body<Operation<P, M>>;
}

/** A typed fetch: the path, its parameters and body are checked against the document. */
export function createClient(baseUrl: string, token: string) {
  return async function request<P extends keyof paths, M extends Method>(
    method: M,
    path: P,
    call: Call<P, M>,
  ): Promise<Success<Operation<P, M>>> {
    const params = call.params as { path?: Record<string, string | number>; query?: Record<string, string | number | boolean> };
    const url = new URL(
      String(path).replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params.path?.[name]))),
      baseUrl,
    );
    for (const [key, value] of Object.entries(params.query ?? {})) url.searchParams.set(key, String(value));
    const response = await fetch(url, {
      method: method.toUpperCase(),
      headers: { 'private-token': token, ...(call.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    });
    if (!response.ok) throw new Error(`${method.toUpperCase()} ${String(path)}: ${response.status}`);
    return (await response.json()) as Success<Operation<P, M>>;
  };
}

/** Reads a project and files an issue in it, with the types the document gives. */
export async function fileIssue(baseUrl: string, token: string, projectPath: string): Promise<number> {
  const request = createClient(baseUrl, token);
  const project = await request('get', '/api/v4/projects/{id}', { params: { path: { id: projectPath } } });
  const name: string = project.name;
  const issue = await request('post', '/api/v4/projects/{id}/issues', {
    params: { path: { id: String(project.id) } },
    body: { title: `Filed by a typed client for ${name}`, description: 'compiled against docs/openapi.json' },
  });
  const iid: number = issue.iid;
  // @ts-expect-error: an issue needs a title (the document says so, and the compiler holds to it)
  await request('post', '/api/v4/projects/{id}/issues', { params: { path: { id: '1' } }, body: { description: 'no title' } });
  return iid;
}
