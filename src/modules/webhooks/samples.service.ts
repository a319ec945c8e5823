import type { Actor } from '../../infra/auth/index.js';
import { BadRequestError } from '../../infra/errors/index.js';
import type { GroupsService, IssuesService, NamespaceRow, ProjectRow, ProjectsService } from '../projects/index.js';
import type { QueuedDelivery } from './deliveries.service.js';
import { TRIGGER_EVENTS, TRIGGER_KIND, issuePayload, notePayload, pushPayload, type Trigger } from './payloads.rules.js';
import { issueFacts, noteFacts, type HookTriggers } from './triggers.service.js';

/**
 * What a test sends for each trigger, as the established product's test does: the project's
 * newest issue or comment (matching the trigger's confidentiality), or a push of the default
 * branch; a project without one is told what it lacks.
 */
export class TestSamples {
  constructor(
    private readonly triggers: HookTriggers,
    private readonly projects: ProjectsService,
    private readonly groups: GroupsService,
    private readonly issues: IssuesService,
    private readonly externalUrl: string,
  ) {}

  /** The project a group hook's test speaks of: the first project in the group or below it. */
  async groupProject(group: NamespaceRow, actor: Actor): Promise<ProjectRow> {
    const below = await this.groups.descendants(group);
    const namespaceIds = [group.id, ...below.map((n) => n.id)];
    const { rows } = await this.projects.list(actor, { namespaceIds, orderBy: 'id', sort: 'asc' }, 1, 0);
    const first = rows[0];
    if (!first) throw new BadRequestError('Ensure the group has at least one project.');
    return first;
  }

  async build(project: ProjectRow, trigger: Trigger, actor: Actor): Promise<Omit<QueuedDelivery, 'hookId' | 'eventUuid'>> {
    const { kind, confidential } = TRIGGER_KIND[trigger];
    const facts = await this.triggers.projectFacts(project);
    const user = await this.triggers.userFacts(actor.user.id);
    const base = this.externalUrl;
    if (kind === 'push' || kind === 'tag_push') {
      const tag = kind === 'tag_push';
      const body = pushPayload(
        {
          project: facts,
          user,
          ref: tag ? 'v1.0.0' : project.default_branch,
          refType: tag ? 'tag' : 'branch',
          before: null,
          after: null,
          commits: [],
          totalCommits: 0,
          tagMessage: null,
        },
        base,
      );
      return { trigger, event: TRIGGER_EVENTS[trigger], body };
    }
    const { rows } = await this.issues.list(
      project,
      { orderBy: 'created_at', sort: 'desc', includeConfidential: true, viewerId: actor.user.id },
      50,
      0,
    );
    const candidates = rows.filter((i) => (i.confidential === 1) === confidential);
    const issue = candidates[0];
    if (!issue) throw new BadRequestError(`Ensure the project has ${confidential ? 'confidential ' : ''}issues.`);
    if (kind === 'issue') {
      const body = issuePayload({ project: facts, user, issue: issueFacts(issue), action: 'open' }, base);
      return { trigger, event: TRIGGER_EVENTS[trigger], body };
    }
    // The newest comment among the newest issues (a few reads at most: a test is one click).
    for (const candidate of candidates.slice(0, 10)) {
      const notes = await this.issues.listNotes(candidate, 'desc', 20, 0);
      const note = notes.rows.find((n) => n.system === 0);
      if (!note) continue;
      const body = notePayload({ project: facts, user, issue: issueFacts(candidate), note: noteFacts(note), action: 'create' }, base);
      return { trigger, event: TRIGGER_EVENTS[trigger], body };
    }
    throw new BadRequestError('Ensure the project has notes.');
  }
}
