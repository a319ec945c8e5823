import { Type, type Static } from '@sinclair/typebox';
import { IntegerId, NamespaceOrProjectId } from '../../infra/http/index.js';
import { Nullable, StringEnum } from '../../infra/http/response-types.js';
import { DateTime, UserBasic } from './entities.schemas.js';

export const JobParams = Type.Object({ id: NamespaceOrProjectId, job_id: IntegerId });
export const CreateJobBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 255 })),
  ref: Type.Optional(Type.String({ maxLength: 255 })),
});
export const FinishJobBody = Type.Object({
  status: Type.Union([Type.Literal('success'), Type.Literal('failed')]),
});

// Response entity (jobs.presenter.ts; see entities.schemas.ts: allow-lists).
export const Job = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  ref: Type.String(),
  status: StringEnum(['running', 'success', 'failed']),
  created_at: DateTime,
  started_at: DateTime,
  finished_at: Nullable(DateTime),
  /** Seconds, with milliseconds as the fraction. */
  duration: Nullable(Type.Number()),
  web_url: Type.String(),
  project: Type.Object({ id: Type.Integer(), name: Type.String(), path_with_namespace: Type.String() }),
  user: Nullable(UserBasic),
});
export type JobEntity = Static<typeof Job>;
/** A job as registered: its job token, shown this once. */
export const JobWithToken = Type.Object({ ...Job.properties, token: Type.String() });
