import { Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../infra/http/response-types.js';
import { IntegerId, NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';
import { BasicSnippet, ProjectIdentity } from '../projects/index.js';

// Requests and answers of the repository storage moves API (moves.routes.ts, moves.presenter.ts).
// Fastify serialises the answers with these schemas, so they list every field the presenter returns.

const StorageName = Type.String({ minLength: 1, maxLength: 255 });
export const BulkMoveBody = Type.Object({ source_storage_name: StorageName, destination_storage_name: Type.Optional(StorageName) });
export const SingleMoveBody = Type.Object({ destination_storage_name: Type.Optional(StorageName) });
export const MoveListQuery = Type.Object(PaginationQuery);
export const MoveParams = Type.Object({ repository_storage_move_id: IntegerId });
export const ContainerParams = Type.Object({ id: NamespaceOrProjectId });
export const ContainerMoveParams = Type.Object({ id: NamespaceOrProjectId, repository_storage_move_id: IntegerId });

const DateTime = Type.String({ format: 'date-time' });

/** `human_state_name` (reference §3.2): each state's name, `cleanup failed` with a space. */
const MoveStateName = StringEnum(['initial', 'scheduled', 'started', 'finished', 'failed', 'replicated', 'cleanup failed']);

const BasicMove = {
  id: Type.Integer(),
  created_at: DateTime,
  state: MoveStateName,
  source_storage_name: Type.String(),
  destination_storage_name: Type.String(),
  error_message: Nullable(Type.String()),
};

/** The group of a group move; null when the group is gone. */
const GroupIdentity = Type.Object({ id: Type.Integer(), web_url: Type.String(), name: Type.String() });

// `project` (ProjectIdentity) and `snippet` (BasicSnippet) are null when the container is gone.
export const ProjectMove = Type.Object({ ...BasicMove, project: Nullable(ProjectIdentity) });
export const SnippetMove = Type.Object({ ...BasicMove, snippet: Nullable(BasicSnippet) });
export const GroupMove = Type.Object({ ...BasicMove, group: Nullable(GroupIdentity) });

/** `POST /<kind>_repository_storage_moves`: the bulk move is scheduled. */
export const MovesScheduled = Type.Object({ message: Type.String() });
