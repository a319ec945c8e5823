import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import type { Clock } from '../../infra/clock.js';
import type { BranchFilterStrategy } from '../../infra/db/tables/webhooks.js';
import { NotFoundError, ValidationError } from '../../infra/errors/index.js';
import type { Page } from '../../infra/http/index.js';
import { LOCAL_NETWORK_REFUSED, addressLiteral, checkHookUrl, isLocalAddress } from './address.rules.js';
import { checkBranchFilter } from './branch-filter.rules.js';
import { CLEARED } from './failure.rules.js';
import type { HookOwner, HookRow, HooksRepository, HookLogRow } from './hooks.repository.js';
import type { TokenSeal } from './token-seal.service.js';
import type { HookInput } from './webhooks.schemas.js';

const flag = (value: boolean | undefined) => (value === undefined ? undefined : value ? 1 : 0);

/** A project's or a group's hooks: create, edit, remove, with the URL checked on the way in. */
export class HooksService {
  constructor(
    private readonly hooks: HooksRepository,
    private readonly clock: Clock,
    private readonly seal: TokenSeal,
    private readonly allowLocal: boolean,
  ) {}

  list(owner: HookOwner): Promise<HookRow[]> {
    return this.hooks.list(owner);
  }

  listPage(owner: HookOwner, page: Page): Promise<{ rows: HookRow[]; total: number }> {
    return this.hooks.listPage(owner, page.limit, page.offset);
  }

  async get(owner: HookOwner, id: number): Promise<HookRow> {
    const row = await this.hooks.find(owner, id);
    if (!row) throw new NotFoundError('Hook');
    return row;
  }

  logs(hook: HookRow, limit = 20): Promise<HookLogRow[]> {
    return this.hooks.logs(hook.id, limit);
  }

  async create(owner: HookOwner, input: HookInput & { url: string }): Promise<HookRow> {
    await this.checkUrl(input.url);
    const strategy: BranchFilterStrategy = input.branch_filter_strategy ?? 'wildcard';
    this.checkFilter(strategy, input.push_events_branch_filter);
    const now = this.clock.now();
    return this.hooks.insert({
      project_id: owner.kind === 'project' ? owner.id : null,
      group_id: owner.kind === 'group' ? owner.id : null,
      uuid: randomUUID(),
      url: input.url,
      name: input.name ?? '',
      description: input.description ?? '',
      token_sealed: input.token ? this.seal.seal(input.token) : null,
      push_events: flag(input.push_events) ?? 1,
      tag_push_events: flag(input.tag_push_events) ?? 0,
      issues_events: flag(input.issues_events) ?? 0,
      confidential_issues_events: flag(input.confidential_issues_events) ?? 0,
      note_events: flag(input.note_events) ?? 0,
      confidential_note_events: flag(input.confidential_note_events) ?? 0,
      enable_ssl_verification: flag(input.enable_ssl_verification) ?? 1,
      push_events_branch_filter: input.push_events_branch_filter ?? null,
      branch_filter_strategy: strategy,
      created_at: now,
      updated_at: now,
    });
  }

  /** An edit also re-enables a disabled hook (its receiver may be fixed); an empty token removes it. */
  async update(owner: HookOwner, id: number, input: HookInput): Promise<HookRow> {
    const row = await this.get(owner, id);
    if (input.url !== undefined) await this.checkUrl(input.url);
    const strategy = input.branch_filter_strategy ?? row.branch_filter_strategy;
    const filter = input.push_events_branch_filter !== undefined ? input.push_events_branch_filter : row.push_events_branch_filter;
    this.checkFilter(strategy, filter);
    const updated = await this.hooks.update(row.id, {
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.token !== undefined ? { token_sealed: input.token ? this.seal.seal(input.token) : null } : {}),
      ...(input.push_events !== undefined ? { push_events: flag(input.push_events) } : {}),
      ...(input.tag_push_events !== undefined ? { tag_push_events: flag(input.tag_push_events) } : {}),
      ...(input.issues_events !== undefined ? { issues_events: flag(input.issues_events) } : {}),
      ...(input.confidential_issues_events !== undefined ? { confidential_issues_events: flag(input.confidential_issues_events) } : {}),
      ...(input.note_events !== undefined ? { note_events: flag(input.note_events) } : {}),
      ...(input.confidential_note_events !== undefined ? { confidential_note_events: flag(input.confidential_note_events) } : {}),
      ...(input.enable_ssl_verification !== undefined ? { enable_ssl_verification: flag(input.enable_ssl_verification) } : {}),
      push_events_branch_filter: filter,
      branch_filter_strategy: strategy,
      ...CLEARED,
      updated_at: this.clock.now(),
    });
    if (!updated) throw new NotFoundError('Hook');
    return updated;
  }

  async remove(owner: HookOwner, id: number): Promise<void> {
    const row = await this.get(owner, id);
    await this.hooks.delete(row.id);
  }

  private checkFilter(strategy: BranchFilterStrategy, filter: string | null | undefined): void {
    const problem = checkBranchFilter(strategy, filter);
    if (problem) throw ValidationError.field('push_events_branch_filter', problem);
  }

  /**
   * Scheme and form first; then the host, resolved now: a name or address on the local network is
   * refused unless WEBHOOK_ALLOW_LOCAL_NETWORK is on. Deliveries check again when they connect.
   */
  async checkUrl(raw: string): Promise<void> {
    const checked = checkHookUrl(raw);
    if (!checked.ok) throw ValidationError.field('url', checked.message);
    if (this.allowLocal) return;
    const host = checked.url.hostname;
    const literal = addressLiteral(host);
    let addresses: string[];
    if (literal !== null) addresses = [literal];
    else {
      try {
        addresses = (await lookup(host, { all: true })).map((a) => a.address);
      } catch {
        throw ValidationError.field('url', 'is blocked: Host cannot be resolved or invalid');
      }
    }
    if (addresses.length === 0 || addresses.some(isLocalAddress))
      throw ValidationError.field('url', `is blocked: ${LOCAL_NETWORK_REFUSED}`);
  }
}
