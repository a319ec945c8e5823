import { toIso, toIsoOrNull } from '../../infra/clock.js';
import { alertStatus } from './failure.rules.js';
import type { HookRow } from './hooks.repository.js';

/** A hook as the established product's API shows it; the token is never part of it. */
function mapCommon(row: HookRow, now: number) {
  const temporarily = row.disabled_until !== null && row.disabled_until > now;
  return {
    id: row.id,
    url: row.url,
    name: row.name,
    description: row.description,
    push_events: row.push_events === 1,
    push_events_branch_filter: row.push_events_branch_filter,
    branch_filter_strategy: row.branch_filter_strategy,
    issues_events: row.issues_events === 1,
    confidential_issues_events: row.confidential_issues_events === 1,
    merge_requests_events: false,
    tag_push_events: row.tag_push_events === 1,
    note_events: row.note_events === 1,
    confidential_note_events: row.confidential_note_events === 1,
    job_events: false,
    pipeline_events: false,
    wiki_page_events: false,
    deployment_events: false,
    releases_events: false,
    feature_flag_events: false,
    emoji_events: false,
    resource_access_token_events: false,
    repository_update_events: false,
    enable_ssl_verification: row.enable_ssl_verification === 1,
    alert_status: alertStatus(row, now),
    disabled_until: temporarily ? toIsoOrNull(row.disabled_until) : null,
    url_variables: [],
    custom_headers: [],
    created_at: toIso(row.created_at),
  };
}

export const mapProjectHook = (row: HookRow, now: number) => ({ ...mapCommon(row, now), project_id: row.project_id ?? 0 });
export const mapGroupHook = (row: HookRow, now: number) => ({
  ...mapCommon(row, now),
  group_id: row.group_id ?? 0,
  subgroup_events: false,
  member_events: false,
});
