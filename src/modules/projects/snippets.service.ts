import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Database, Executor } from '../../infra/db/index.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { AccessLevel } from './access.policy.js';
import type { ProjectRow } from './projects.repository.js';
import type { SnippetsRepository, SnippetRow } from './snippets.repository.js';
import type { SpamChecker, SpamContext } from '../spam/index.js';

export interface CreateSnippetInput {
  title: string;
  file_name?: string | undefined;
  content?: string | undefined;
  description?: string | undefined;
  visibility?: string | undefined;
  files?: { file_path: string; content: string }[] | undefined;
}

const CONTENT_MAX = 1_048_576;

/** Personal snippets (no project) and project snippets. */
export class SnippetsService {
  constructor(
    private readonly db: Database,
    private readonly snippets: SnippetsRepository,
    private readonly clock: Clock,
    private readonly bus: DomainEventBus,
    private readonly defaultStorage: string,
    private readonly spam: SpamChecker | null = null,
  ) {}

  /** With `spam` (a person submitting through the API) the spam rules run after validation. */
  async create(actor: Actor, project: ProjectRow | null, input: CreateSnippetInput, spam?: SpamContext): Promise<SnippetRow> {
    const file = input.files?.[0];
    const fileName = input.file_name ?? file?.file_path ?? 'snippet.txt';
    const content = input.content ?? file?.content;
    const messages: Record<string, string[]> = {};
    if (input.title.trim() === '') messages.title = ["can't be blank"];
    if (input.title.length > 255) messages.title = ['is too long (maximum is 255 characters)'];
    if (content === undefined || content === '') messages.content = ["can't be blank"];
    else if (content.length > CONTENT_MAX) messages.content = [`is too long (maximum is ${CONTENT_MAX} characters)`];
    if (fileName.length > 255 || fileName.includes('..')) messages.file_name = ['is invalid'];
    if (Object.keys(messages).length > 0) throw new ValidationError(messages);
    if (spam && this.spam) {
      await this.spam.check('snippet', { title: input.title, description: `${input.description ?? ''}\n${content ?? ''}` }, spam);
    }
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      const snippet = await this.snippets.on(trx).insert({
        projectId: project?.id ?? null,
        authorId: actor.user.id,
        title: input.title,
        description: input.description ?? '',
        fileName,
        content: content ?? '',
        visibility: input.visibility ?? 'private',
        storage: project?.repository_storage ?? this.defaultStorage,
        now,
      });
      await this.bus.publish(
        { type: 'snippet_created', projectId: project?.id ?? null, snippetId: snippet.id, authorId: actor.user.id, at: now },
        trx,
      );
      return snippet;
    });
  }

  async getVisible(
    actor: Actor | null,
    id: number,
    projectLevel: (projectId: number) => Promise<{ level: number; visible: boolean }>,
  ): Promise<SnippetRow> {
    const snippet = await this.snippets.findById(id);
    if (!snippet) throw new NotFoundError('Snippet');
    if (!(await this.canSee(actor, snippet, projectLevel))) throw new NotFoundError('Snippet');
    return snippet;
  }

  /**
   * Access to a project snippet is decided by the project first (its visibility and the caller's
   * membership), never by authorship: an author removed from the project loses its snippets with
   * the project. Only a personal snippet is its author's by authorship alone.
   */
  async canSee(
    actor: Actor | null,
    snippet: SnippetRow,
    projectLevel: (projectId: number) => Promise<{ level: number; visible: boolean }>,
  ): Promise<boolean> {
    if (actor?.user.isAdmin) return true;
    if (snippet.project_id !== null) {
      const { level, visible } = await projectLevel(snippet.project_id);
      if (!visible) return false;
      if (level >= AccessLevel.GUEST) return true;
    } else if (actor && snippet.author_id === actor.user.id) {
      return true;
    }
    return snippet.visibility === 'public' || (snippet.visibility === 'internal' && actor !== null);
  }

  findById(id: number): Promise<SnippetRow | undefined> {
    return this.snippets.findById(id);
  }

  list(filter: Parameters<SnippetsRepository['list']>[0], limit: number, offset: number) {
    return this.snippets.list(filter, limit, offset);
  }

  /**
   * Who may change a snippet it can see (here and through its git repository): an admin, a
   * Maintainer of its project, or its author — of a project snippet only while still a member,
   * since authorship adds the right to edit on top of access to the project, never in its place.
   */
  canModify(actor: Actor, snippet: SnippetRow, level: number): boolean {
    if (actor.user.isAdmin || level >= AccessLevel.MAINTAINER) return true;
    return snippet.author_id === actor.user.id && (snippet.project_id === null || level >= AccessLevel.GUEST);
  }

  async remove(actor: Actor, snippet: SnippetRow, level: number): Promise<void> {
    if (!this.canModify(actor, snippet, level)) throw new ForbiddenError();
    await this.snippets.delete(snippet.id);
  }

  /** `executor`: a storage move switches the storage inside its own transaction. */
  async setStorage(id: number, storage: string, executor: Executor = this.db): Promise<void> {
    await this.snippets.on(executor).update(id, { repository_storage: storage });
  }

  async setReadOnly(id: number, readOnly: boolean, executor: Executor = this.db): Promise<void> {
    await this.snippets.on(executor).update(id, { repository_read_only: readOnly ? 1 : 0 });
  }
}
