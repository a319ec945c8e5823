import { toIso } from '../../infra/clock.js';
import { mapUserBasic, type UserRow } from '../identity/index.js';
import { ACTIONS, actionName } from './events.actions.js';
import type { EventDetail } from './events.service.js';

type Users = Map<number, UserRow>;

/** The note embedded in note events (reference §2.8); `noteable_iid` on project lists (SPEC). */
function mapNote(e: EventDetail, users: Users, base: string, withIid: boolean) {
  const author = e.note_author_id === null ? undefined : users.get(e.note_author_id);
  return {
    id: e.note_id,
    type: null,
    body: e.note_body,
    attachment: null,
    author: author ? mapUserBasic(author, base) : null,
    created_at: e.note_created_at === null ? null : toIso(e.note_created_at),
    updated_at: e.note_updated_at === null ? null : toIso(e.note_updated_at),
    system: e.note_system === 1,
    noteable_id: e.noteable_id,
    noteable_type: e.noteable_type,
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

/** Activity event (SPEC "Activity event", field order of reference §2.4). */
export function mapEvent(e: EventDetail, users: Users, base: string, projectList: boolean) {
  const author = users.get(e.author_id);
  const push = e.action === ACTIONS.pushed && e.push_action !== null;
  return {
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
    ...(e.target_type === 'Note' && e.note_id !== null ? { note: mapNote(e, users, base, projectList) } : {}),
    ...(author ? { author: mapUserBasic(author, base) } : {}),
    imported: e.imported_from !== 'none',
    imported_from: e.imported_from,
    ...(push
      ? {
          push_data: {
            commit_count: e.commit_count,
            action: e.push_action,
            ref_type: e.ref_type,
            commit_from: e.commit_from,
            commit_to: e.commit_to,
            ref: e.ref,
            commit_title: e.commit_title,
            ref_count: e.ref_count,
          },
        }
      : {}),
    author_username: author?.username ?? null,
    ...(projectList ? { data: null } : {}),
  };
}

/** Every user a page of events shows (authors and note authors). */
export function userIdsOf(rows: readonly EventDetail[]): number[] {
  return [...new Set(rows.flatMap((e) => [e.author_id, ...(e.note_author_id !== null ? [e.note_author_id] : [])]))];
}
