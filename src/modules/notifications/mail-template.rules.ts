/**
 * One template, two renderings: every notification e-mail is described once (a lead line,
 * paragraphs, labelled facts, a link, a footer) and rendered as the plain-text part and the HTML
 * part from that same description, so the two never say different things.
 */
export interface MailTemplate {
  /** First line: what happened. */
  readonly lead: string;
  readonly paragraphs?: readonly string[];
  readonly facts?: ReadonlyArray<readonly [label: string, value: string]>;
  readonly link?: { readonly text: string; readonly url: string };
  /** Why the recipient got it and how to change that. */
  readonly footer: readonly string[];
}

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** Line breaks of a paragraph kept in HTML. */
const htmlText = (value: string) => escapeHtml(value).replace(/\r?\n/g, '<br>');

export function renderText(mail: MailTemplate): string {
  const lines: string[] = [mail.lead, ''];
  for (const paragraph of mail.paragraphs ?? []) lines.push(paragraph, '');
  if (mail.facts?.length) {
    for (const [label, value] of mail.facts) lines.push(`${label}: ${value}`);
    lines.push('');
  }
  if (mail.link) lines.push(`${mail.link.text}: ${mail.link.url}`, '');
  lines.push('-- ', ...mail.footer);
  return `${lines.join('\n')}\n`;
}

export function renderHtml(mail: MailTemplate): string {
  const parts: string[] = [`<p>${htmlText(mail.lead)}</p>`];
  for (const paragraph of mail.paragraphs ?? []) parts.push(`<p>${htmlText(paragraph)}</p>`);
  if (mail.facts?.length) {
    parts.push(
      `<table>${mail.facts.map(([label, value]) => `<tr><th align="left">${escapeHtml(label)}</th><td>${htmlText(value)}</td></tr>`).join('')}</table>`,
    );
  }
  if (mail.link) parts.push(`<p><a href="${escapeHtml(mail.link.url)}">${escapeHtml(mail.link.text)}</a></p>`);
  parts.push(`<hr><p><small>${mail.footer.map(htmlText).join('<br>')}</small></p>`);
  return `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>${parts.join('\n')}</body></html>\n`;
}

/** The List-Id of a project's mails: `full/path <id.path.full.host>` (the established product's shape). */
export function listId(project: { id: number; full_path: string }, host: string): string {
  const domain = project.full_path
    .split('/')
    .reverse()
    .map((segment) => segment.replace(/[^A-Za-z0-9-]/g, '-'))
    .join('.');
  return `${project.full_path} <${project.id}.${domain}.${host}>`;
}
