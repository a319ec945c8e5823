/** What the spam module is built with: the platform alone. */
export type SpamModuleDeps = Record<string, never>;
