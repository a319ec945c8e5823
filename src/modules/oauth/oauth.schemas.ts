import { Type } from '@sinclair/typebox';
import { IntegerId, PaginationQuery } from '../../infra/http/index.js';

/** Reference §2.10: `POST /applications` (admin API). */
export const CreateApplicationBody = Type.Object({
  name: Type.String({ maxLength: 255 }),
  redirect_uri: Type.String({ maxLength: 21_000 }),
  scopes: Type.String({ maxLength: 1000 }),
  confidential: Type.Optional(Type.Boolean({ default: true })),
});

export const ListApplicationsQuery = Type.Object({ ...PaginationQuery });

export const ApplicationIdParams = Type.Object({ id: IntegerId });

export const ApplicationEntity = Type.Object({
  id: Type.Integer(),
  application_id: Type.String(),
  application_name: Type.String(),
  callback_url: Type.String(),
  confidential: Type.Boolean(),
});

export const ApplicationWithSecretEntity = Type.Object({
  ...ApplicationEntity.properties,
  secret: Type.String(),
});
