import type { Generated } from 'kysely';
import type { Flag, Millis } from './core.js';

export type MoveContainerKind = 'project' | 'snippet' | 'group';
export type MoveState = 'initial' | 'scheduled' | 'started' | 'finished' | 'failed' | 'replicated' | 'cleanup_failed';

export interface RepositoryStorageMovesTable {
  id: Generated<number>;
  container_kind: MoveContainerKind;
  container_id: number;
  state: MoveState;
  source_storage_name: string;
  destination_storage_name: string;
  error_message: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface GroupWikiRepositoriesTable {
  group_id: number;
  repository_storage: string;
  repository_read_only: Generated<Flag>;
  created_at: Millis;
  updated_at: Millis;
}

export interface GitActivePushesTable {
  id: Generated<number>;
  container_kind: MoveContainerKind;
  container_id: number;
  expires_at: Millis;
  created_at: Millis;
}

export interface GitTables {
  repository_storage_moves: RepositoryStorageMovesTable;
  group_wiki_repositories: GroupWikiRepositoriesTable;
  git_active_pushes: GitActivePushesTable;
}
