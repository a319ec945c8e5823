import { toIso } from '../../infra/clock.js';
import { mapUserBasic, type UsersService } from '../identity/index.js';
import { mapProject, type GroupsService, type ProjectsService, type SnippetsService } from '../projects/index.js';
import type { MoveRow, MoveState } from './git.repository.js';

/** `human_state_name`: every state reads as its name except `cleanup_failed` (reference §3.2). */
const HUMAN_STATE: Record<MoveState, string> = {
  initial: 'initial',
  scheduled: 'scheduled',
  started: 'started',
  finished: 'finished',
  failed: 'failed',
  replicated: 'replicated',
  cleanup_failed: 'cleanup failed',
};

export function mapBasicMove(move: MoveRow) {
  return {
    id: move.id,
    created_at: toIso(move.created_at),
    state: HUMAN_STATE[move.state],
    source_storage_name: move.source_storage_name,
    destination_storage_name: move.destination_storage_name,
    error_message: move.error_message,
  };
}

/** Moves with their container: `project` (ProjectIdentity), `snippet` (BasicSnippet) or `group`. */
export class MovePresenter {
  constructor(
    private readonly base: string,
    private readonly projects: ProjectsService,
    private readonly snippets: SnippetsService,
    private readonly groups: GroupsService,
    private readonly users: UsersService,
  ) {}

  async present(move: MoveRow) {
    const basic = mapBasicMove(move);
    switch (move.container_kind) {
      case 'project':
        return { ...basic, project: await this.project(move.container_id) };
      case 'snippet':
        return { ...basic, snippet: await this.snippet(move.container_id) };
      case 'group':
        return { ...basic, group: await this.group(move.container_id) };
    }
  }

  presentAll(moves: readonly MoveRow[]) {
    return Promise.all(moves.map((m) => this.present(m)));
  }

  private async project(id: number) {
    const project = await this.projects.findByIdIncludingDeleted(id);
    if (!project) return null;
    const full = mapProject(project, this.base, { namespace: await this.projects.namespaceOf(project), admin: false });
    return {
      id: full.id,
      description: full.description,
      name: full.name,
      name_with_namespace: full.name_with_namespace,
      path: full.path,
      path_with_namespace: full.path_with_namespace,
      created_at: full.created_at,
    };
  }

  private async snippet(id: number) {
    const snippet = await this.snippets.findById(id);
    if (!snippet) return null;
    const project = snippet.project_id !== null ? await this.projects.findByIdIncludingDeleted(snippet.project_id) : undefined;
    const author = await this.users.findById(snippet.author_id);
    const webUrl = project ? `${this.base}/${project.full_path}/-/snippets/${snippet.id}` : `${this.base}/-/snippets/${snippet.id}`;
    return {
      id: snippet.id,
      title: snippet.title,
      description: snippet.description,
      visibility: snippet.visibility,
      author: author ? mapUserBasic(author, this.base) : null,
      created_at: toIso(snippet.created_at),
      updated_at: toIso(snippet.updated_at),
      project_id: snippet.project_id,
      web_url: webUrl,
      raw_url: `${webUrl}/raw`,
      http_url_to_repo: project
        ? `${this.base}/${project.full_path}/snippets/${snippet.id}.git`
        : `${this.base}/snippets/${snippet.id}.git`,
    };
  }

  private async group(id: number) {
    const group = await this.groups.findByIdIncludingDeleted(id);
    if (!group) return null;
    return { id: group.id, web_url: `${this.base}/groups/${group.full_path}`, name: group.name };
  }
}
