import { Type } from '@sinclair/typebox';
import { IntegerId, NamespaceOrProjectId } from '../../infra/http/index.js';

export const JobParams = Type.Object({ id: NamespaceOrProjectId, job_id: IntegerId });
export const CreateJobBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 255 })),
  ref: Type.Optional(Type.String({ maxLength: 255 })),
});
export const FinishJobBody = Type.Object({
  status: Type.Union([Type.Literal('success'), Type.Literal('failed')]),
});
