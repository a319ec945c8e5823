import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../infra/http/response-types.js';
import { DateTime, UserBasic, VisibilityValue } from './entities.schemas.js';

// Response entity of personal and project snippets (see entities.schemas.ts: allow-lists).

export const Snippet = Type.Object({
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
  file_name: Type.String(),
  files: Type.Array(Type.Object({ path: Type.String(), raw_url: Type.String() })),
  http_url_to_repo: Type.String(),
  repository_storage: Type.String(),
});
export type SnippetEntity = Static<typeof Snippet>;
export const SnippetList = Type.Array(Snippet);
