import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../infra/http/response-types.js';
import { DateTime, UserBasic, VisibilityValue } from './entities.schemas.js';

// Response entity of personal and project snippets (see entities.schemas.ts: allow-lists).

/** The fields `BasicSnippet` and the full snippet start with, in this order. */
const SnippetBasicFields = {
  id: Type.Integer(),
  title: Type.String(),
  description: Type.String(),
  visibility: VisibilityValue,
  author: Nullable(UserBasic),
  created_at: DateTime,
  updated_at: DateTime,
  project_id: Nullable(Type.Integer()),
  web_url: Type.String(),
  raw_url: Type.String(),
};

/** `BasicSnippet` (a repository storage move's snippet): the basic fields and the clone URL. */
export const BasicSnippet = Type.Object({ ...SnippetBasicFields, http_url_to_repo: Type.String() });

export const Snippet = Type.Object({
  ...SnippetBasicFields,
  file_name: Type.String(),
  files: Type.Array(Type.Object({ path: Type.String(), raw_url: Type.String() })),
  http_url_to_repo: Type.String(),
  repository_storage: Type.String(),
});
export type SnippetEntity = Static<typeof Snippet>;
export const SnippetList = Type.Array(Snippet);
