import { Type } from '@sinclair/typebox';
import { NamespaceOrProjectId } from '../../infra/http/index.js';
import { ALL_EVENTS } from './notifications.levels.js';

export const SourceParams = Type.Object({ id: NamespaceOrProjectId });

// Accepted in the query string or the body (JSON or form); the body has no schema because a
// PUT without one is valid. Values are checked by the service, not by the schema, so that a bad level or a value that
// is not a boolean answers with the bodies of reference §1.3 rather than a schema error.
const eventProperties = Object.fromEntries(
  ALL_EVENTS.map((event) => [
    event,
    Type.Optional(Type.Unknown({ description: 'boolean, or true/false/1/0/yes/no...; null means default' })),
  ]),
);

export const SettingBody = Type.Object(
  {
    level: Type.Optional(Type.Unknown({ description: 'disabled, participating, watch, global, mention or custom' })),
    notification_email: Type.Optional(Type.Unknown({ description: 'global setting only; one of your verified emails' })),
    ...eventProperties,
  },
  { additionalProperties: true },
);
