import { PUSH_ACTIONS, REF_TYPES, type DomainEvent, type PushedRef } from '../../infra/bus.js';
import type { Executor } from '../../infra/db/index.js';
import { ACTIONS } from './events.actions.js';
import type { EventsRepository, NewEvent, NewPushPayload } from './events.repository.js';

const COMMIT_TITLE_MAX = 70;

/** First line of the newest commit message, at most 70 characters like Rails `truncate`. */
export function commitTitle(message: string | null): string | null {
  if (message === null) return null;
  const line = (message.split('\n')[0] ?? '').trim();
  if (line === '') return null;
  return line.length > COMMIT_TITLE_MAX ? `${line.slice(0, COMMIT_TITLE_MAX - 3)}...` : line;
}

/** `refs/heads/main` -> `main`, `refs/tags/v1` -> `v1`. */
export function shortRef(ref: string): string {
  return ref.replace(/^refs\/(heads|tags)\//, '');
}

/** The payload of one ref (reference §2.6): from/to follow the action, not what was sent. */
function payloadOf(ref: PushedRef): NewPushPayload {
  return {
    commit_count: Math.max(0, Math.trunc(ref.commitCount)),
    action: ref.action,
    ref_type: ref.refType,
    commit_from: ref.action === 'created' ? null : ref.commitFrom,
    commit_to: ref.action === 'removed' ? null : ref.commitTo,
    ref: shortRef(ref.ref),
    commit_title: commitTitle(ref.commitTitle),
    ref_count: null,
  };
}

/**
 * The push events of one push (reference §2.6): refs are split by type (branches, then tags)
 * and by action; a group larger than `limit` becomes one bulk event with `ref_count`.
 */
export function pushPayloads(refs: readonly PushedRef[], limit: number): NewPushPayload[] {
  const out: NewPushPayload[] = [];
  for (const refType of REF_TYPES) {
    for (const action of PUSH_ACTIONS) {
      const group = refs.filter((r) => r.refType === refType && r.action === action);
      if (group.length === 0) continue;
      if (group.length > limit) {
        out.push({
          commit_count: 0,
          action,
          ref_type: refType,
          commit_from: null,
          commit_to: null,
          ref: null,
          commit_title: null,
          ref_count: group.length,
        });
      } else {
        out.push(...group.map(payloadOf));
      }
    }
  }
  return out;
}

/** Turns domain events into activity events, inside the publisher's transaction. */
export function createRecorder(rows: EventsRepository, pushLimit: number) {
  return async (event: DomainEvent, executor: Executor): Promise<void> => {
    const events = rows.on(executor);
    const row = (projectId: number | null, authorId: number, action: number, targetType: string | null, targetId: number | null) =>
      ({
        project_id: projectId,
        author_id: authorId,
        action,
        target_type: targetType,
        target_id: targetId,
        created_at: event.at,
      }) satisfies NewEvent;
    switch (event.type) {
      case 'project_created':
        await events.insert(row(event.projectId, event.authorId, ACTIONS.created, null, null));
        return;
      case 'issue_opened':
        await events.insert(row(event.projectId, event.authorId, ACTIONS.created, 'Issue', event.issueId));
        return;
      case 'issue_closed':
        await events.insert(row(event.projectId, event.authorId, ACTIONS.closed, 'Issue', event.issueId));
        return;
      case 'issue_reopened':
        await events.insert(row(event.projectId, event.authorId, ACTIONS.reopened, 'Issue', event.issueId));
        return;
      case 'note_created':
        await events.insert(row(event.projectId, event.authorId, ACTIONS.commented, 'Note', event.noteId));
        return;
      case 'snippet_created':
        await events.insert(row(event.projectId, event.authorId, ACTIONS.created, 'Snippet', event.snippetId));
        return;
      // Only project memberships make events; group joins create nothing (reference §2.7).
      case 'member_joined':
      case 'member_left':
        if (event.projectId === null || event.namespaceId !== null) return;
        await events.insert(row(event.projectId, event.userId, event.type === 'member_joined' ? ACTIONS.joined : ACTIONS.left, null, null));
        return;
      case 'push_received':
        for (const payload of pushPayloads(event.refs, pushLimit)) {
          await events.insertPush(row(event.projectId, event.authorId, ACTIONS.pushed, null, null), payload);
        }
        return;
      // Accounts, groups, removals, moves, sign-ins, errors and issue edits make no activity event.
      case 'error_reported':
      case 'project_moved':
      case 'signed_in_from_new_address':
      case 'issue_updated':
      case 'issue_reassigned':
      case 'note_updated':
      case 'user_created':
      case 'user_renamed':
      case 'user_blocked':
      case 'group_created':
      case 'group_removing':
      case 'project_removing':
      case 'audited':
        return;
    }
  };
}
