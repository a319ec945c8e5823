import { sql, type RawBuilder } from 'kysely';

/** `%`, `_` and `\` in a user's text match literally. */
const escapeLike = (value: string): string => value.replace(/[%_\\]/g, (c) => `\\${c}`);

/**
 * A LIKE pattern with its escape character named: PostgreSQL defaults to `\`, SQLite has none,
 * so without `escape '\'` an escaped `_` never matches there.
 */
const likePattern = (pattern: string): RawBuilder<string> => sql<string>`${pattern} escape '\\'`;

/** Rows whose value contains `text` (already lower-cased by the caller when it should be). */
export const containing = (text: string): RawBuilder<string> => likePattern(`%${escapeLike(text)}%`);

/** Full paths strictly below `fullPath` (lower-cased). */
export const below = (fullPath: string): RawBuilder<string> => likePattern(`${escapeLike(fullPath.toLowerCase())}/%`);
