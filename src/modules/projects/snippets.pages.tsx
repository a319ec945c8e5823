import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError, UnauthorizedError } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { Layout, sendPage, type Crumb } from '../../web/index.js';
import type { ProjectsPagesDeps } from './projects.pages.js';
import { namespaceCrumbs } from './page-crumbs.service.js';
import type { ProjectRow } from './projects.repository.js';
import type { SnippetRow } from './snippets.repository.js';
import { VisibilityBadge, shortTime } from './projects.views.js';

const SnippetParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const ProjectSnippetParams = Type.Object({ project: Type.String({ minLength: 1, maxLength: 1024 }), id: Type.Integer({ minimum: 1 }) });

export const snippetPath = (snippet: Pick<SnippetRow, 'id'>, project: Pick<ProjectRow, 'full_path'> | null) =>
  project ? `/${project.full_path}/-/snippets/${snippet.id}` : `/-/snippets/${snippet.id}`;

/**
 * The pages behind a snippet's `web_url` (`/<full_path>/-/snippets/:id`, `/-/snippets/:id`) and
 * its `raw_url`, with the API's visibility rules (SnippetsService.canSee).
 */
export function snippetsPages(web: ApiApp, deps: ProjectsPagesDeps): void {
  const { snippets, projects, access, users } = deps;

  /** The snippet the caller may see; a visitor who may not is sent to sign in first. */
  const visible = async (request: FastifyRequest, id: number): Promise<SnippetRow> => {
    const actor = request.page.actor;
    const projectLevel = async (projectId: number) => {
      const project = await projects.findById(projectId);
      if (!project) return { level: 0, visible: false };
      const level = await access.projectLevel(actor, project);
      return { level, visible: access.canSee(actor, project.visibility, level) };
    };
    const snippet = await snippets.findById(id);
    if (snippet && (await snippets.canSee(actor, snippet, projectLevel))) return snippet;
    if (!actor) throw new UnauthorizedError();
    throw new NotFoundError('Snippet');
  };

  const show = async (request: FastifyRequest, reply: FastifyReply, snippet: SnippetRow, project: ProjectRow | null, level: number) => {
    const author = snippet.author_id === null ? undefined : (await users.mapByIds([snippet.author_id])).get(snippet.author_id);
    const here = snippetPath(snippet, project);
    const crumbs: Crumb[] = project
      ? [
          ...(await namespaceCrumbs(deps, await projects.namespaceOf(project), request.page.actor)),
          { label: project.name, href: `/${project.full_path}` },
          { label: 'Snippets' },
          { label: `$${snippet.id}` },
        ]
      : [...(author ? [{ label: author.username, href: `/${author.username}` }] : []), { label: `Snippet $${snippet.id}` }];
    return sendPage(
      reply,
      <Layout
        title={snippet.title}
        page={request.page}
        crumbs={crumbs}
        {...(project ? { project: { fullPath: project.full_path, name: project.name, level } } : {})}
      >
        <div class="page-head">
          <h1 id="snippet-title">
            {snippet.title} <VisibilityBadge visibility={snippet.visibility} />
          </h1>
          <a href={`${here}/raw`}>Open raw</a>
        </div>
        <p class="muted">
          ${snippet.id} · created {shortTime(snippet.created_at)}
          {author ? (
            <>
              {' '}
              by <a href={`/${author.username}`}>@{author.username}</a>
            </>
          ) : null}
        </p>
        {snippet.description ? <p>{snippet.description}</p> : null}
        <section class="snippet-file">
          <h2 class="file-name">{snippet.file_name}</h2>
          <pre id="snippet-content">{snippet.content}</pre>
        </section>
      </Layout>,
    );
  };

  const raw = (reply: FastifyReply, snippet: SnippetRow) =>
    reply
      .type('text/plain; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', 'inline')
      .send(snippet.content);

  /** A project's snippet by its id: the project must be the snippet's own. */
  const inProject = async (request: FastifyRequest, id: number) => {
    const { row, level } = request.page.project!;
    const project = row as ProjectRow;
    const snippet = await visible(request, id);
    if (snippet.project_id !== project.id) throw new NotFoundError('Snippet');
    return { snippet, project, level };
  };

  /** A snippet by id alone: a project snippet answers at its project's address. */
  const personal = async (request: FastifyRequest, reply: FastifyReply, id: number, suffix: string) => {
    const snippet = await visible(request, id);
    if (snippet.project_id === null) return snippet;
    const project = await projects.findById(snippet.project_id);
    if (!project) throw new NotFoundError('Snippet');
    await reply.redirect(`${snippetPath(snippet, project)}${suffix}`, 301);
    return null;
  };

  const policy = { page: { signIn: 'optional', project: 0 } } as const;
  web.get('/-/p/:project/snippets/:id', { schema: { params: ProjectSnippetParams }, config: policy }, async (request, reply) => {
    const { snippet, project, level } = await inProject(request, request.params.id);
    return show(request, reply, snippet, project, level);
  });
  web.get('/-/p/:project/snippets/:id/raw', { schema: { params: ProjectSnippetParams }, config: policy }, async (request, reply) =>
    raw(reply, (await inProject(request, request.params.id)).snippet),
  );
  web.get('/-/snippets/:id', { schema: { params: SnippetParams }, config: { page: { signIn: 'optional' } } }, async (request, reply) => {
    const snippet = await personal(request, reply, request.params.id, '');
    return snippet ? show(request, reply, snippet, null, 0) : reply;
  });
  web.get(
    '/-/snippets/:id/raw',
    { schema: { params: SnippetParams }, config: { page: { signIn: 'optional' } } },
    async (request, reply) => {
      const snippet = await personal(request, reply, request.params.id, '/raw');
      return snippet ? raw(reply, snippet) : reply;
    },
  );
}
