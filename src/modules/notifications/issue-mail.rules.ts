import type { MailTemplate } from './mail-template.rules.js';

/** The issue events that send mail, by the setting event that decides them. */
export type IssueMailEvent = 'new_issue' | 'close_issue' | 'reopen_issue' | 'reassign_issue' | 'issue_due' | 'new_note';

export interface IssueMailFacts {
  event: IssueMailEvent;
  project: { name: string; full_path: string };
  issue: { iid: number; title: string; description: string; confidential: boolean };
  actor: { name: string; username: string };
  url: string;
  /** The comment, for `new_note`. */
  note?: string;
  /** For `reassign_issue`: `Name (@username)` of the assignees now and before. */
  assignees?: readonly string[];
  previousAssignees?: readonly string[];
  /** For `issue_due`: the due date. */
  dueDate?: string;
}

const QUOTE_MAX = 10_000;
const clip = (text: string) => (text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}…` : text);

/** Every mail of one issue shares the subject, so mail clients thread them (the established product's shape). */
export function issueSubject(facts: IssueMailFacts): string {
  return `${facts.project.name} | ${facts.issue.title} (#${facts.issue.iid})`.slice(0, 400);
}

export function issueTemplate(facts: IssueMailFacts): Omit<MailTemplate, 'footer'> {
  const who = `${facts.actor.name} (@${facts.actor.username})`;
  const link = { text: `View issue #${facts.issue.iid} in ${facts.project.full_path}`, url: facts.url };
  switch (facts.event) {
    case 'new_issue':
      return {
        lead: `${who} opened issue #${facts.issue.iid}: ${facts.issue.title}`,
        paragraphs: facts.issue.description.trim() ? [clip(facts.issue.description)] : [],
        facts: facts.issue.confidential ? [['Confidential', 'yes']] : [],
        link,
      };
    case 'close_issue':
      return { lead: `Issue #${facts.issue.iid} was closed by ${who}.`, link };
    case 'reopen_issue':
      return { lead: `Issue #${facts.issue.iid} was reopened by ${who}.`, link };
    case 'new_note':
      return { lead: `${who} commented on issue #${facts.issue.iid}:`, paragraphs: [clip(facts.note ?? '')], link };
    case 'reassign_issue': {
      const list = (names: readonly string[] | undefined) => (names?.length ? names.join(', ') : 'Unassigned');
      return {
        lead: `${who} changed the assignees of issue #${facts.issue.iid}.`,
        facts: [
          ['Assignees', list(facts.assignees)],
          ['Previous assignees', list(facts.previousAssignees)],
        ],
        link,
      };
    }
    case 'issue_due':
      return { lead: `Issue #${facts.issue.iid} is due on ${facts.dueDate ?? ''}: ${facts.issue.title}`, link };
  }
}
