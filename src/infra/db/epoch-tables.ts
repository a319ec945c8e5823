import type { OperationNode, RootOperationNode } from 'kysely';
import type { EpochName } from './epochs.js';
import type { DB } from './schema.js';

export type TableWrite = 'insert' | 'update' | 'delete';

/** How writes to one table bear on an epoch's cached answers. */
export interface EpochTable<T extends keyof DB> {
  /** The kinds of write that bump; all three when absent (a new row a miss never cached needs none). */
  readonly on?: readonly TableWrite[];
  /** An update that sets only these columns leaves the cached answers valid (stamps on hot paths). */
  readonly ignore?: readonly (keyof DB[T] & string)[];
}

/** The tables whose rows an epoch's cached answers are built from; declared by the module that caches them. */
export type EpochTables = { readonly [T in keyof DB]?: EpochTable<T> };

/** A write as a statement states it; `columns` null when unknown (raw SQL), which counts as every column. */
interface Write {
  table: string;
  kind: TableWrite;
  columns: readonly string[] | null;
}

/** What a statement does to tables, as far as epochs care. */
export interface StatementEffect {
  writes: readonly Write[];
  /** It reads `cache_epochs` (infra/db/epochs.ts). */
  readsEpochs: boolean;
}

/** Neither a write nor a read of the counters: most statements. */
export const NO_EFFECT: StatementEffect = { writes: [], readsEpochs: false };
const READS_EPOCHS: StatementEffect = { writes: [], readsEpochs: true };

/** By statement node: compiled-once statements keep theirs, so they are described once. */
const described = new WeakMap<RootOperationNode, StatementEffect>();

export function effectOf(node: RootOperationNode): StatementEffect {
  let effect = described.get(node);
  if (!effect) {
    effect = describe(node);
    described.set(node, effect);
  }
  return effect;
}

function tableName(node: OperationNode | undefined): string | undefined {
  if (!node) return undefined;
  if (node.kind === 'AliasNode') return tableName((node as unknown as { node: OperationNode }).node);
  if (node.kind === 'TableNode') return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
  return undefined;
}

function columnNames(updates: readonly { column: OperationNode }[] | undefined): string[] | null {
  if (!updates) return [];
  const names: string[] = [];
  for (const update of updates) {
    const column = update.column as unknown as { kind: string; column?: { name?: string } };
    if (column.kind !== 'ColumnNode' || typeof column.column?.name !== 'string') return null;
    names.push(column.column.name);
  }
  return names;
}

// Raw SQL names its tables in the text: `insert into t`, `update t`, `delete from t`
// (a `do update set` yields the table `set`, which no epoch declares).
const RAW_WRITE = /\b(insert\s+(?:or\s+\w+\s+)?into|replace\s+into|update|delete\s+from)\s+(?:"?\w+"?\.)?"?(\w+)"?/gi;

function describe(node: RootOperationNode): StatementEffect {
  if (node.kind === 'SelectQueryNode') {
    const froms = node.from?.froms ?? [];
    return froms.some((from) => tableName(from) === 'cache_epochs') ? READS_EPOCHS : NO_EFFECT;
  }
  if (node.kind === 'InsertQueryNode') {
    const table = tableName(node.into);
    if (!table) return NO_EFFECT;
    const writes: Write[] = [{ table, kind: 'insert', columns: null }];
    // An upsert or a replace may change an existing row.
    if (node.onConflict && !node.onConflict.doNothing)
      writes.push({ table, kind: 'update', columns: columnNames(node.onConflict.updates) });
    if (node.replace || node.orAction) writes.push({ table, kind: 'update', columns: null }, { table, kind: 'delete', columns: null });
    return { writes, readsEpochs: false };
  }
  if (node.kind === 'UpdateQueryNode') {
    const table = tableName(node.table);
    return table ? { writes: [{ table, kind: 'update', columns: columnNames(node.updates) }], readsEpochs: false } : NO_EFFECT;
  }
  if (node.kind === 'DeleteQueryNode') {
    const writes = node.from.froms.flatMap((from): Write[] => {
      const table = tableName(from);
      return table ? [{ table, kind: 'delete', columns: null }] : [];
    });
    return { writes, readsEpochs: false };
  }
  if (node.kind === 'RawNode') {
    const text = node.sqlFragments.join(' ');
    const writes: Write[] = [];
    for (const [, verb = '', table = ''] of text.matchAll(RAW_WRITE)) {
      const word = verb.toLowerCase();
      if (word.startsWith('update')) writes.push({ table, kind: 'update', columns: null });
      else if (word.startsWith('delete')) writes.push({ table, kind: 'delete', columns: null });
      else if (word.startsWith('replace') || /\sor\s/.test(word)) {
        for (const kind of ['insert', 'update', 'delete'] as const) writes.push({ table, kind, columns: null });
      } else writes.push({ table, kind: 'insert', columns: null });
    }
    return { writes, readsEpochs: writes.length === 0 && /\bcache_epochs\b/i.test(text) };
  }
  // Schema changes (migrations) and MERGE, which the application does not use.
  return NO_EFFECT;
}

interface Rule {
  epoch: EpochName;
  on: ReadonlySet<TableWrite>;
  ignore: ReadonlySet<string>;
}

/** The declared tables of every epoch, by table. */
export class EpochRegistry {
  private readonly byTable = new Map<string, Rule[]>();
  private readonly byEpoch = new Map<EpochName, EpochTables>();

  declare(epoch: EpochName, tables: EpochTables): void {
    if (this.byEpoch.has(epoch)) this.byEpoch.set(epoch, { ...this.byEpoch.get(epoch), ...tables });
    else this.byEpoch.set(epoch, tables);
    for (const [table, spec] of Object.entries(tables) as [string, EpochTable<keyof DB>][]) {
      const rules = (this.byTable.get(table) ?? []).filter((rule) => rule.epoch !== epoch);
      rules.push({ epoch, on: new Set(spec.on ?? ['insert', 'update', 'delete']), ignore: new Set<string>(spec.ignore ?? []) });
      this.byTable.set(table, rules);
    }
  }

  /** What each epoch was declared with, for tests and diagnostics. */
  declared(): ReadonlyMap<EpochName, EpochTables> {
    return this.byEpoch;
  }

  /** The epochs a statement's writes end, before knowing whether it changed rows. */
  epochsOf(effect: StatementEffect): EpochName[] {
    let epochs: EpochName[] | undefined;
    for (const write of effect.writes) {
      for (const rule of this.byTable.get(write.table) ?? []) {
        if (!rule.on.has(write.kind)) continue;
        if (write.kind === 'update' && write.columns && write.columns.every((column) => rule.ignore.has(column))) continue;
        if (!(epochs ??= []).includes(rule.epoch)) epochs.push(rule.epoch);
      }
    }
    return epochs ?? [];
  }
}
