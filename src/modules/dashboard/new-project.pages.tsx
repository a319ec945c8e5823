import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ApiApp } from '../../infra/http/index.js';
import type { Platform } from '../../infra/platform.js';
import { Csrf, Field, FormError, Layout, Select, TextArea, formErrorsOf, sendPage, type FieldErrors } from '../../web/index.js';
import { AccessLevel, type NamespaceRow } from '../projects/index.js';
import type { DashboardDeps } from './dashboard.deps.js';

const NewProjectQuery = Type.Object({ namespace_id: Type.Optional(Type.Integer({ minimum: 1 })) });
const NewProjectForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  path: Type.Optional(Type.String({ maxLength: 255 })),
  namespace_id: Type.Integer({ minimum: 1 }),
  visibility: Type.Union([Type.Literal('private'), Type.Literal('internal'), Type.Literal('public')]),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
});

const VISIBILITIES = [
  { value: 'private', label: 'Private: only members see it' },
  { value: 'internal', label: 'Internal: every signed-in user sees it' },
  { value: 'public', label: 'Public: everyone sees it' },
];

/** The service's words for a refusal, on the form's own fields. */
const FIELD_OF: Record<string, string> = { visibility_level: 'visibility', namespace: 'namespace_id' };

/** `/projects/new`: a project in the person's own namespace or a group where they may create one (Developer). */
export function newProjectPages(web: ApiApp, platform: Platform, deps: DashboardDeps): void {
  const { projects } = deps;

  const namespaces = async (request: FastifyRequest): Promise<NamespaceRow[]> => {
    const actor = request.page.actor!;
    const [personal, groups] = await Promise.all([
      projects.groups.personalNamespace(actor.user.id),
      projects.groups.list(
        {
          scope: projects.access.listScope(actor),
          memberOf: [{ userId: actor.user.id, minAccess: AccessLevel.DEVELOPER, direct: false, now: platform.clock.now() }],
        },
        200,
        0,
      ),
    ]);
    return [...(personal ? [personal] : []), ...groups.rows.sort((a, b) => a.full_path.localeCompare(b.full_path))];
  };

  const form = async (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) => {
    const choices = await namespaces(request);
    const typed = input.namespace_id;
    const chosen = typeof typed === 'string' || typeof typed === 'number' ? String(typed) : String(choices[0]?.id ?? '');
    return (
      <Layout title="New project" page={request.page} crumbs={[{ label: 'Dashboard', href: '/' }, { label: 'New project' }]}>
        <h1>New project</h1>
        <form method="post" action="/projects" class="stacked">
          <Csrf token={request.page.csrf} />
          <FormError errors={errors} />
          <Field label="Project name" name="name" value={input.name} error={errors.name} required maxLength={255} />
          <Select
            label="Namespace"
            name="namespace_id"
            value={chosen}
            error={errors.namespace_id}
            options={choices.map((ns) => ({
              value: String(ns.id),
              label: ns.kind === 'user' ? `${ns.full_path} (personal)` : ns.full_path,
            }))}
          />
          <Field
            label="Project slug"
            name="path"
            value={input.path}
            error={errors.path}
            maxLength={255}
            hint="The last part of the project's address. Left empty, it is made from the name."
          />
          <Select
            label="Visibility"
            name="visibility"
            value={typeof input.visibility === 'string' ? input.visibility : 'private'}
            error={errors.visibility}
            options={VISIBILITIES}
          />
          <TextArea label="Description" name="description" value={input.description} error={errors.description} rows={3} maxLength={2000} />
          <button type="submit">Create project</button> <a href="/">Cancel</a>
        </form>
      </Layout>
    );
  };

  web.get('/projects/new', { schema: { querystring: NewProjectQuery }, config: { page: { signIn: 'required' } } }, async (request, reply) =>
    sendPage(reply, await form(request, request.query.namespace_id ? { namespace_id: request.query.namespace_id } : {}, {})),
  );

  web.post('/projects', { schema: { body: NewProjectForm }, config: { page: { signIn: 'required', form } } }, async (request, reply) => {
    const { name, path, namespace_id, visibility, description } = request.body;
    try {
      const project = await projects.projects.create(request.page.actor!, {
        name,
        path: path?.trim() || undefined,
        namespace_id,
        visibility,
        description,
      });
      return reply.redirectWithFlash(`/${project.full_path}`, { kind: 'notice', text: `Project ${project.name} was created.` });
    } catch (error) {
      const refusal = formErrorsOf(error);
      const status = (error as { status?: number }).status;
      // A namespace the person may not create in is a choice on the form, not a page of its own.
      if (status === 403 || status === 404)
        return sendPage(reply, await form(request, request.body, { namespace_id: 'You cannot create projects in this namespace.' }), 400);
      if (!refusal) throw error;
      const errors: Record<string, string> = {};
      for (const [field, message] of Object.entries(refusal)) errors[FIELD_OF[field] ?? field] = message;
      if (status === 409) return sendPage(reply, await form(request, request.body, { path: 'has already been taken' }), 400);
      return sendPage(reply, await form(request, request.body, errors), 400);
    }
  });
}
