import { Type, type TOptional, type TUnsafe } from '@sinclair/typebox';
import { NamespaceOrProjectId } from '../../infra/http/index.js';
import { Nullable, StringEnum } from '../../infra/http/response-types.js';
import { ALL_EVENTS, LEVELS, type NotificationEvent } from './notifications.levels.js';

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

// Response entities (notifications.presenter.ts). Fastify serialises each answer with them, so
// they are allow-lists: every field the presenter returns is here, with its real type.
const LevelValue = StringEnum(LEVELS);

/** `true`/`false`, or `null` for the default (reference §1.5); only the events the setting's kind has. */
const Events = Type.Object(
  Object.fromEntries(ALL_EVENTS.map((event) => [event, Type.Optional(Nullable(Type.Boolean()))])) as Record<
    NotificationEvent,
    TOptional<TUnsafe<boolean | null>>
  >,
);

/** A group or project setting: `events` only for `custom`. */
export const Setting = Type.Object({ level: LevelValue, events: Type.Optional(Events) });
/** The global setting (SPEC leaves `events` out of it). */
export const GlobalSetting = Type.Object({ level: LevelValue, notification_email: Type.String() });
