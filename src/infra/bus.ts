import type { AuditEntry } from './audit.js';
import type { Executor } from './db/index.js';

/**
 * Domain events published by the core inside the writer's transaction; subscribers
 * (events, notifications) write with the same executor, so an action and its activity
 * record commit or roll back together. The core never calls the areas built on it.
 */
/** The kinds of ref a push changes and what happened to each (reference §2.6), in the order push events are written. */
export const REF_TYPES = ['branch', 'tag'] as const;
export type RefType = (typeof REF_TYPES)[number];
export const PUSH_ACTIONS = ['created', 'removed', 'pushed'] as const;
export type PushAction = (typeof PUSH_ACTIONS)[number];

export interface PushedRef {
  ref: string;
  refType: RefType;
  action: PushAction;
  commitFrom: string | null;
  commitTo: string | null;
  commitCount: number;
  commitTitle: string | null;
  /** The newest commits the push brought to a branch (at most 20, oldest first), for webhooks; absent in bulk events. */
  commits?: PushedCommit[];
  /** An annotated tag's message. */
  tagMessage?: string | null;
}

/** One commit of a push as webhook receivers see it (the established product's commit attributes). */
export interface PushedCommit {
  id: string;
  message: string;
  title: string;
  /** ISO 8601 with the author's offset. */
  timestamp: string;
  authorName: string;
  authorEmail: string;
  added: string[];
  modified: string[];
  removed: string[];
}

/** An error whose first event was just stored, or that an event just reopened (error mails). */
export interface ErrorReport {
  projectId: number;
  errorId: number;
  regressed: boolean;
  title: string;
  culprit: string;
  eventsCount: number;
  at: number;
}

export type DomainEvent =
  | { type: 'user_created'; userId: number; username: string; name: string; at: number }
  | { type: 'user_renamed'; userId: number; username: string; name: string; at: number }
  /** An administrator blocked the user (published in the transaction of the change). */
  | { type: 'user_blocked'; userId: number; at: number }
  | { type: 'project_created'; projectId: number; authorId: number; at: number }
  | { type: 'issue_opened' | 'issue_closed' | 'issue_reopened'; projectId: number; issueId: number; authorId: number; at: number }
  /** An edit that neither closed nor reopened the issue; `changes` names each changed column with its values before and after. */
  | {
      type: 'issue_updated';
      projectId: number;
      issueId: number;
      authorId: number;
      changes: Record<string, { previous: unknown; current: unknown }>;
      at: number;
    }
  /** The assignees of an issue changed (with or without other changes); `previousAssigneeIds` as they were. */
  | { type: 'issue_reassigned'; projectId: number; issueId: number; authorId: number; previousAssigneeIds: number[]; at: number }
  | { type: 'note_created'; projectId: number | null; noteId: number; authorId: number; at: number }
  /** A comment's text was edited (webhooks send it as an update). */
  | { type: 'note_updated'; projectId: number | null; noteId: number; authorId: number; at: number }
  | { type: 'member_joined' | 'member_left'; projectId: number | null; namespaceId: number | null; userId: number; at: number }
  | { type: 'snippet_created'; projectId: number | null; snippetId: number; authorId: number; at: number }
  | { type: 'project_removing'; projectId: number; storage: string; fullPath: string; at: number }
  | { type: 'group_created'; namespaceId: number; authorId: number; at: number }
  | { type: 'group_removing'; namespaceId: number; fullPath: string; at: number }
  | { type: 'push_received'; projectId: number; authorId: number; refs: PushedRef[]; at: number }
  /** The project's path changed (a rename of its path: the established product's "project was moved"). */
  | { type: 'project_moved'; projectId: number; authorId: number | null; fromPath: string; toPath: string; at: number }
  /** A password sign-in from an address the user has not signed in from before (not their first sign-in). */
  | { type: 'signed_in_from_new_address'; userId: number; ip: string; userAgent: string | null; at: number }
  /**
   * Error tracking stored the first event of an error, or an event that reopened a resolved one,
   * in a project whose error mails are on (published in the ingestion's transaction).
   */
  | ({ type: 'error_reported' } & ErrorReport)
  /** Something the audit trail records (src/infra/audit.ts), published by the service that made the change. */
  | { type: 'audited'; entry: AuditEntry; at: number };

export type DomainEventType = DomainEvent['type'];
/** The event of one type, narrowed. */
export type DomainEventOf<T extends DomainEventType> = Extract<DomainEvent, { type: T }>;
type Handler = (event: DomainEvent, executor: Executor) => Promise<void>;

/**
 * Subscribers say which events they handle, so a publish calls only those (each an awaited
 * async call): token creation publishes `audited` once a request, which the audit trail and the
 * account mails handle, and used to call all eight subscribers for it.
 */
export class DomainEventBus {
  /** Every subscription in order: the events it handles (`changes`: every type but `audited`). */
  private readonly subscriptions: { types: ReadonlySet<DomainEventType> | 'changes'; handler: Handler }[] = [];
  /** The handlers of each type, in subscription order; rebuilt after a subscription. */
  private readonly byType = new Map<DomainEventType, readonly Handler[]>();

  /** `handler` for the events of `types`, narrowed to them. */
  subscribe<T extends DomainEventType>(types: readonly T[], handler: (event: DomainEventOf<T>, executor: Executor) => Promise<void>): void {
    this.add(new Set(types), handler as Handler);
  }

  /**
   * `handler` for every change of the domain: each type but `audited`, the audit trail's record of a
   * change (a subscriber that also wants it subscribes to it by name).
   */
  subscribeToChanges(handler: Handler): void {
    this.add('changes', handler);
  }

  /** Runs the event's subscribers with the publisher's executor (its open transaction), in subscription order. */
  async publish(event: DomainEvent, executor: Executor): Promise<void> {
    for (const handler of this.handlersOf(event.type)) await handler(event, executor);
  }

  private add(types: ReadonlySet<DomainEventType> | 'changes', handler: Handler): void {
    this.subscriptions.push({ types, handler });
    this.byType.clear();
  }

  private handlersOf(type: DomainEventType): readonly Handler[] {
    let handlers = this.byType.get(type);
    if (!handlers) {
      handlers = this.subscriptions
        .filter(({ types }) => (types === 'changes' ? type !== 'audited' : types.has(type)))
        .map(({ handler }) => handler);
      this.byType.set(type, handlers);
    }
    return handlers;
  }
}
