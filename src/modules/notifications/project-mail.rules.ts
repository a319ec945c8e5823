import type { MailTemplate } from './mail-template.rules.js';

/** The established product's "Project was moved" mail: the old and the new path, and how to follow. */
export interface ProjectMovedFacts {
  project: { name: string; full_path: string };
  fromPath: string;
  url: string;
  /** `git remote set-url origin …` for a clone over HTTP. */
  cloneUrl: string;
}

/** A project's subject line: its name first, as the established product's mails have it. */
const subjectOf = (projectName: string, what: string) => `${projectName} | ${what}`.slice(0, 400);

export const projectMovedSubject = (facts: ProjectMovedFacts): string => subjectOf(facts.project.name, 'Project was moved');

export function projectMovedTemplate(facts: ProjectMovedFacts): Omit<MailTemplate, 'footer'> {
  return {
    lead: `Project ${facts.fromPath} was moved to ${facts.project.full_path}.`,
    paragraphs: [`You can update your local clone with:\ngit remote set-url origin ${facts.cloneUrl}`],
    facts: [
      ['Old path', facts.fromPath],
      ['New path', facts.project.full_path],
    ],
    link: { text: `View ${facts.project.full_path}`, url: facts.url },
  };
}

/** A new error (its first event) or a resolved one an event reopened. */
export interface ErrorMailFacts {
  project: { name: string; full_path: string };
  regressed: boolean;
  title: string;
  culprit: string;
  eventsCount: number;
  at: number;
  url: string;
}

const TITLE_MAX = 300;
const clipTitle = (title: string) => (title.length > TITLE_MAX ? `${title.slice(0, TITLE_MAX)}…` : title);

export const errorSubject = (facts: ErrorMailFacts): string =>
  subjectOf(facts.project.name, `${facts.regressed ? 'Regressed error' : 'New error'}: ${clipTitle(facts.title)}`);

export function errorTemplate(facts: ErrorMailFacts): Omit<MailTemplate, 'footer'> {
  const when = `${new Date(facts.at).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  return {
    lead: facts.regressed
      ? `A resolved error in ${facts.project.full_path} happened again and was reopened: ${clipTitle(facts.title)}`
      : `A new error was reported in ${facts.project.full_path}: ${clipTitle(facts.title)}`,
    facts: [
      ...(facts.culprit ? ([['Culprit', facts.culprit]] as const) : []),
      ['Events', String(facts.eventsCount)],
      [facts.regressed ? 'Reopened' : 'First seen', when],
    ],
    link: { text: 'View the error', url: facts.url },
  };
}
