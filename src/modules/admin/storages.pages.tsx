import { Type } from '@sinclair/typebox';
import { NotFoundError } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { EmptyState, sendPage } from '../../web/index.js';
import type { MoveRow } from '../git/index.js';
import type { AdminPageDeps } from './admin.deps.js';
import { AdminLayout, formatTime } from './admin.views.js';

const ADMIN = { page: { signIn: 'required', admin: true } } as const;
/** Projects listed per storage; the API's moves endpoints page through all of them. */
const PROJECTS_SHOWN = 50;
const MOVES_SHOWN = 20;
const StorageParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) });

function MovesTable({ moves }: { moves: readonly MoveRow[] }) {
  if (moves.length === 0) return <p class="muted">No repository has been moved yet.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Repository</th>
          <th>From</th>
          <th>To</th>
          <th>State</th>
          <th>Scheduled</th>
        </tr>
      </thead>
      <tbody>
        {moves.map((move) => (
          <tr key={move.id}>
            <td>
              {move.container_kind} {move.container_id}
            </td>
            <td>{move.source_storage_name}</td>
            <td>{move.destination_storage_name}</td>
            <td>
              <span class={move.state === 'failed' ? 'badge danger' : 'badge'}>{move.state}</span>
              {move.error_message ? <div class="muted">{move.error_message}</div> : null}
            </td>
            <td>{formatTime(move.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `/admin/storages`: the configured repository storages, the projects on each, and recent moves. */
export function storagePages(web: ApiApp, deps: AdminPageDeps): void {
  const { git, projects } = deps;

  web.get('/admin/storages', { config: ADMIN }, async (request, reply) => {
    const names = git.storages.names();
    const moves = await git.moves.list('project', null, MOVES_SHOWN, 0);
    return sendPage(
      reply,
      <AdminLayout title="Repository storages" page={request.page} section="storages" crumbs={[{ label: 'Repository storages' }]}>
        <h1>Repository storages</h1>
        <p class="muted">
          Storages are configured with REPOSITORY_STORAGES; repositories move between them through the API's storage moves.
        </p>
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Directory</th>
            </tr>
          </thead>
          <tbody>
            {names.map((name) => (
              <tr key={name}>
                <td>
                  <a href={`/admin/storages/${encodeURIComponent(name)}`}>{name}</a>
                </td>
                <td>
                  <code>{git.storages.dir(name)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <h2>Recent project moves</h2>
        <MovesTable moves={moves.rows} />
      </AdminLayout>,
    );
  });

  web.get('/admin/storages/:name', { schema: { params: StorageParams }, config: ADMIN }, async (request, reply) => {
    const name = request.params.name;
    if (!git.storages.has(name)) throw new NotFoundError('Storage');
    const ids = await projects.projects.idsOnStorage(name, 0, PROJECTS_SHOWN + 1);
    const rows = (await Promise.all(ids.slice(0, PROJECTS_SHOWN).map((id) => projects.projects.findById(id)))).filter(
      (row) => row !== undefined,
    );
    const moves = await git.moves.list('project', null, MOVES_SHOWN, 0);
    const here = moves.rows.filter((move) => move.source_storage_name === name || move.destination_storage_name === name);
    return sendPage(
      reply,
      <AdminLayout
        title={`Storage ${name}`}
        page={request.page}
        section="storages"
        crumbs={[{ label: 'Repository storages', href: '/admin/storages' }, { label: name }]}
      >
        <h1>Storage {name}</h1>
        <p>
          Directory <code>{git.storages.dir(name)}</code>
        </p>
        <h2>Projects</h2>
        {rows.length === 0 ? (
          <EmptyState title="No project is stored here">
            New projects go to the default storage; move repositories here with a storage move.
          </EmptyState>
        ) : (
          <ul>
            {rows.map((project) => (
              <li key={project.id}>
                <a href={`/${project.full_path}`}>{project.full_path}</a>
              </li>
            ))}
            {ids.length > PROJECTS_SHOWN ? <li class="muted">and more</li> : null}
          </ul>
        )}
        <h2>Recent moves from or to {name}</h2>
        <MovesTable moves={here} />
      </AdminLayout>,
    );
  });
}
