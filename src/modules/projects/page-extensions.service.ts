import type { IssueRow } from './issues.repository.js';
import type { NamespaceRow } from './namespaces.repository.js';
import type { ProjectRow } from './projects.repository.js';

/** Where an issue came from (an alert, a tracked error): a link on the issue page. */
export interface IssueOrigin {
  readonly label: string;
  /** Null for a caller whose role does not open that page. */
  readonly href: string | null;
}

/** A next step the project overview offers (e.g. "Set up error tracking"), for the roles that can take it. */
export interface OverviewHint {
  readonly title: string;
  readonly text: string;
  readonly action: { readonly href: string; readonly label: string };
}

/** A settings page of a group that another module draws (Webhooks), linked from the group's page. */
export interface GroupSettingsLink {
  readonly label: string;
  readonly href: string;
}

type OriginSource = (issue: IssueRow, project: ProjectRow, level: number) => Promise<IssueOrigin | null>;
type HintSource = (project: ProjectRow, level: number) => Promise<OverviewHint | null>;
type GroupLinkSource = (group: NamespaceRow, level: number) => GroupSettingsLink | null;

/**
 * What modules built after this one add to its pages: the modules that open issues say where
 * an issue came from, and modules with a setting a project lacks say what to set up. They
 * register when they are created; the pages ask at request time (the projects module imports
 * none of them).
 */
export class ProjectPageExtensions {
  private readonly origins: OriginSource[] = [];
  private readonly hints: HintSource[] = [];
  private readonly groupLinks: GroupLinkSource[] = [];

  registerIssueOrigin(source: OriginSource): void {
    this.origins.push(source);
  }

  registerOverviewHint(source: HintSource): void {
    this.hints.push(source);
  }

  /** A group settings page for the roles (and tiers) that may open it: `source` answers null for the others. */
  registerGroupSettingsLink(source: GroupLinkSource): void {
    this.groupLinks.push(source);
  }

  groupSettingsLinks(group: NamespaceRow, level: number): GroupSettingsLink[] {
    return this.groupLinks.map((source) => source(group, level)).filter((link): link is GroupSettingsLink => link !== null);
  }

  async issueOrigins(issue: IssueRow, project: ProjectRow, level: number): Promise<IssueOrigin[]> {
    const found = await Promise.all(this.origins.map((source) => source(issue, project, level)));
    return found.filter((origin): origin is IssueOrigin => origin !== null);
  }

  async overviewHints(project: ProjectRow, level: number): Promise<OverviewHint[]> {
    const found = await Promise.all(this.hints.map((source) => source(project, level)));
    return found.filter((hint): hint is OverviewHint => hint !== null);
  }
}
