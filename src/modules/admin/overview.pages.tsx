import type { ApiApp } from '../../infra/http/index.js';
import { sendPage } from '../../web/index.js';
import type { AdminPageDeps } from './admin.deps.js';
import { AdminLayout } from './admin.views.js';

const ADMIN = { page: { signIn: 'required', admin: true } } as const;

/** `/admin`: system information — version, database, background jobs, counts. */
export function overviewPages(web: ApiApp, deps: AdminPageDeps): void {
  const { platform, identity, version } = deps;
  web.get('/admin', { config: ADMIN }, async (request, reply) => {
    const [jobs, users] = await Promise.all([platform.jobs.pendingCount(), identity.users.countUsers()]);
    const database = platform.database.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite';
    return sendPage(
      reply,
      <AdminLayout title="Overview" page={request.page} section="overview" crumbs={[{ label: 'Overview' }]}>
        <h1>Admin area</h1>
        <h2>System information</h2>
        <dl class="facts">
          <dt>Version</dt>
          <dd id="system-version">{version}</dd>
          <dt>Database</dt>
          <dd id="system-database">{database}</dd>
          <dt>Node.js</dt>
          <dd>{process.version}</dd>
          <dt>Background jobs waiting</dt>
          <dd id="system-jobs-queued">{jobs.queued}</dd>
          <dt>Background jobs running</dt>
          <dd>{jobs.running}</dd>
          <dt>Users</dt>
          <dd>{users}</dd>
          <dt>External URL</dt>
          <dd>
            <code>{platform.config.externalUrl}</code>
          </dd>
        </dl>
        <p>
          <a class="button" href="/admin/users/new">
            New user
          </a>{' '}
          <a class="button secondary" href="/admin/applications">
            OAuth applications
          </a>
        </p>
      </AdminLayout>,
    );
  });
}
