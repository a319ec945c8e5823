/** The most usernames one text can mention (a longer list is a spam vector, not a conversation). */
export const MAX_MENTIONS = 50;

/**
 * `@username` mentions in Markdown, as the established product reads them: outside code spans
 * and fenced code blocks, not inside an e-mail address or a word, lower-cased, unique, in order.
 */
export function mentionedUsernames(markdown: string): string[] {
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, ' ').replace(/`[^`\n]*`/g, ' ');
  const names: string[] = [];
  for (const match of text.matchAll(/(?:^|[^A-Za-z0-9_.@/-])@([A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,253}[A-Za-z0-9_-])?)/g)) {
    const name = (match[1] as string).toLowerCase();
    if (!names.includes(name)) names.push(name);
    if (names.length >= MAX_MENTIONS) break;
  }
  return names;
}
