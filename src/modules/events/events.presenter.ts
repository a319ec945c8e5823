import type { RefType } from '../../infra/bus.js';
import { toIso } from '../../infra/clock.js';
import { mapUserBasic, type UserRow } from '../identity/index.js';
import { ACTIONS, actionName } from './events.actions.js';
import type { EventEntity, EventNoteEntity } from './events.schemas.js';
import type { EventDetail } from './events.service.js';

type Users = Map<number, UserRow>;

/**
 * The note embedded in note events (reference §2.8); `noteable_iid` on project lists (SPEC).
 * Called once the note's join matched (`note_id` is set), so its NOT NULL columns are set.
 */
function mapNote(e: EventDetail, noteId: number, users: Users, base: string, withIid: boolean): EventNoteEntity {
  const author = e.note_author_id === null ? undefined : users.get(e.note_author_id);
  return {
    id: noteId,
    type: null,
    body: e.note_body as string,
    attachment: null,
    author: author ? mapUserBasic(author, base) : null,
    created_at: e.note_created_at === null ? null : toIso(e.note_created_at),
    updated_at: e.note_updated_at === null ? null : toIso(e.note_updated_at),
    system: e.note_system === 1,
    noteable_id: e.noteable_id as number,
    noteable_type: e.noteable_type as string,
    project_id: e.note_project_id,
    resolvable: false,
    confidential: false,
    internal: false,
    imported: false,
    imported_from: 'none',
    ...(withIid ? { noteable_iid: e.noteable_iid } : {}),
    commands_changes: {},
  };
}

function targetIid(e: EventDetail): number | null {
  if (e.target_type === 'Issue') return e.issue_iid;
  return e.target_id;
}

function targetTitle(e: EventDetail): string | null {
  if (e.target_type === 'Issue') return e.issue_title;
  if (e.target_type === 'Snippet') return e.snippet_title;
  return null;
}

/**
 * Activity event, fields in the order of reference §2.4. Built up as one object (optional
 * members assigned in place): spreading conditional parts costs several times more on a
 * page of 100 events (docs/perf-lab.md).
 */
export function mapEvent(e: EventDetail, users: Users, base: string, projectList: boolean): EventEntity {
  const author = users.get(e.author_id);
  // The head as one literal, the tail assigned in order below (keys keep insertion order).
  const out = {
    id: e.id,
    title: null,
    project_id: e.project_id,
    action_name: actionName(e.action, e.target_type, e.push_action),
    target_id: e.target_id,
    target_iid: targetIid(e),
    target_type: e.target_type,
    author_id: e.author_id,
    target_title: targetTitle(e),
    created_at: toIso(e.created_at),
  } as EventEntity;
  if (e.target_type === 'Note' && e.note_id !== null) out.note = mapNote(e, e.note_id, users, base, projectList);
  if (author) out.author = mapUserBasic(author, base);
  out.imported = e.imported_from !== 'none';
  out.imported_from = e.imported_from;
  if (e.action === ACTIONS.pushed && e.push_action !== null) {
    // The payload's join matched (`push_action` is set), so its NOT NULL columns are set.
    out.push_data = {
      commit_count: e.commit_count as number,
      action: e.push_action,
      ref_type: e.ref_type as RefType,
      commit_from: e.commit_from,
      commit_to: e.commit_to,
      ref: e.ref,
      commit_title: e.commit_title,
      ref_count: e.ref_count,
    };
  }
  out.author_username = author?.username ?? null;
  if (projectList) out.data = null;
  return out;
}

/** Every user a page of events shows (authors and note authors). */
export function userIdsOf(rows: readonly EventDetail[]): number[] {
  return [...new Set(rows.flatMap((e) => [e.author_id, ...(e.note_author_id !== null ? [e.note_author_id] : [])]))];
}
