import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ProjectsModule } from '../projects/index.js';
import { UNSUBSCRIBE_PATH } from './notification-mail.service.js';
import type { NotificationsService } from './notifications.service.js';
import { readUnsubscribeToken } from './unsubscribe.rules.js';

interface UnsubscribeDeps {
  service: NotificationsService;
  projects: ProjectsModule;
  secretKeyBase: string;
}

const Params = Type.Object({ token: Type.String({ maxLength: 128 }) });
const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
        `<title>${escapeHtml(title)} · Basalt</title><link rel="stylesheet" href="/-/static/basalt.css"></head>` +
        `<body><main class="unsubscribe"><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
    );
}

/**
 * The List-Unsubscribe link of notification mails. A POST (RFC 8058 one-click: mail clients send
 * `List-Unsubscribe=One-Click` without cookies or credentials) sets the user's level for that
 * project to `disabled` and changes nothing else; the signed token in the address is the only
 * authority. A GET only shows a confirmation button, because link scanners fetch every link.
 */
export async function unsubscribeRoutes(app: FastifyInstance, { service, projects, secretKeyBase }: UnsubscribeDeps): Promise<void> {
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    // One-click clients may post the body as multipart/form-data; its content does not matter.
    scope.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: 4096 }, (_request, _body, done) => done(null, {}));
    const config = { policy: { auth: 'none' as const, session: false } };
    const schema = { params: Params, hide: true };

    const target = async (token: string) => {
      const named = readUnsubscribeToken(token, secretKeyBase);
      if (!named) return null;
      const project = await projects.projects.findById(named.projectId);
      return project ? { ...named, project } : null;
    };
    const gone = (reply: FastifyReply) =>
      page(reply, 404, 'Link not valid', '<p>This unsubscribe link is not valid (or its project no longer exists).</p>');

    scope.get(`${UNSUBSCRIBE_PATH}/:token`, { config, schema }, async (request, reply) => {
      const found = await target(request.params.token);
      if (!found) return gone(reply);
      const path = escapeHtml(found.project.full_path);
      return page(
        reply,
        200,
        'Unsubscribe',
        `<p>Stop all notification e-mails about <strong>${path}</strong>? Your other notification settings stay as they are.</p>` +
          `<form method="post" action="${UNSUBSCRIBE_PATH}/${escapeHtml(request.params.token)}">` +
          `<button type="submit" class="btn btn-danger">Unsubscribe from ${path}</button></form>`,
      );
    });

    scope.post(`${UNSUBSCRIBE_PATH}/:token`, { config, schema }, async (request, reply) => {
      const found = await target(request.params.token);
      if (!found) return gone(reply);
      await service.disableProject(found.userId, found.project.id);
      return page(
        reply,
        200,
        'Unsubscribed',
        `<p>You will no longer receive notification e-mails about <strong>${escapeHtml(found.project.full_path)}</strong>.</p>` +
          `<p><a href="/-/profile/notifications">Notification settings</a></p>`,
      );
    });
  });
}
