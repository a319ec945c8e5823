import type { MailTemplate } from './mail-template.rules.js';

/** The issue events that send mail, by the setting event that decides them. */
export type IssueMailEvent = 'new_issue' | 'close_issue' | 'reopen_issue' | 'new_note';

export interface IssueMailFacts {
  event: IssueMailEvent;
  project: { name: string; full_path: string };
  issue: { iid: number; title: string; description: string; confidential: boolean };
  actor: { name: string; username: string };
  url: string;
  /** The comment, for `new_note`. */
  note?: string;
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
  }
}
