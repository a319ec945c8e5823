import type { PushedCommit, PushedRef } from '../../infra/bus.js';
import { git } from './git.exec.js';

export interface RefCommand {
  oldOid: string;
  newOid: string;
  ref: string;
}

const ZERO = /^0+$/;
const COMMAND = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (\S+)$/;
/** The command list of a push is small next to its pack; past this much we stop reading it. */
const MAX_COMMAND_BYTES = 4 * 1024 * 1024;

/**
 * Reads the ref-update commands at the start of a receive-pack request (pkt-lines up to
 * the first flush-pkt, gitprotocol-pack "Reference Update Request") while the body streams
 * to git, without holding the pack itself.
 */
export class PushCommandReader {
  readonly commands: RefCommand[] = [];
  /** Capabilities the client asked for (after the NUL of the first command). */
  capabilities: readonly string[] = [];
  private buffer = Buffer.alloc(0);
  private done = false;

  /** The command list has ended (or was not one): the rest of the body is the pack. */
  get finished(): boolean {
    return this.done;
  }

  feed = (chunk: Buffer): void => {
    if (this.done) return;
    this.buffer = Buffer.concat([this.buffer, chunk]);
    while (!this.done && this.buffer.length >= 4) {
      const length = Number.parseInt(this.buffer.subarray(0, 4).toString('latin1'), 16);
      if (Number.isNaN(length) || (length > 0 && length < 4)) {
        this.done = true;
        break;
      }
      if (length === 0) {
        this.done = true;
        break;
      }
      if (this.buffer.length < length) break;
      const line = this.buffer.subarray(4, length).toString('utf8');
      this.buffer = this.buffer.subarray(length);
      const [command = '', capabilities] = line.split('\0');
      if (this.commands.length === 0 && capabilities !== undefined) this.capabilities = capabilities.trim().split(' ');
      const text = command.replace(/\n$/, '');
      const match = COMMAND.exec(text);
      if (match?.[1] && match[2] && match[3]) this.commands.push({ oldOid: match[1], newOid: match[2], ref: match[3] });
    }
    if (this.buffer.length > MAX_COMMAND_BYTES) this.done = true;
    if (this.done) this.buffer = Buffer.alloc(0);
  };
}

/** Commands whose ref now holds the new value (git may have refused some). */
export async function appliedCommands(repo: string, commands: readonly RefCommand[]): Promise<RefCommand[]> {
  if (commands.length === 0) return [];
  const listing = await git(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: repo });
  const current = new Map<string, string>();
  for (const line of listing.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) current.set(line.slice(space + 1), line.slice(0, space));
  }
  return commands.filter((c) => (ZERO.test(c.newOid) ? !current.has(c.ref) : current.get(c.ref) === c.newOid));
}

function truncateTitle(message: string): string | null {
  const first = message.split('\n')[0]?.trim() ?? '';
  if (first === '') return null;
  return first.length > 70 ? `${first.slice(0, 67)}...` : first;
}

async function count(repo: string, args: string[]): Promise<number> {
  const out = await git(['rev-list', '--count', ...args], { cwd: repo }).catch(() => '0');
  return Number.parseInt(out.trim(), 10) || 0;
}

/** Commits webhook payloads carry per push, and file names per commit (the established product's limit is 20 commits). */
const HOOK_COMMITS = 20;
const HOOK_FILES = 1000;
const RECORD = '\x1e';
const FIELD = '\x1f';

/** Up to the newest 20 commits of a rev-list range, oldest first, with the files each added, modified and removed. */
async function hookCommits(repo: string, range: string[]): Promise<PushedCommit[]> {
  const format = `--format=${RECORD}%H${FIELD}%an${FIELD}%ae${FIELD}%aI${FIELD}%B${FIELD}`;
  const out = await git(['log', '-n', String(HOOK_COMMITS), '--no-renames', '--root', '--name-status', '--no-color', format, ...range], {
    cwd: repo,
  }).catch(() => '');
  const commits: PushedCommit[] = [];
  for (const record of out.split(RECORD).slice(1)) {
    const [id = '', authorName = '', authorEmail = '', timestamp = '', message = '', files = ''] = record.split(FIELD);
    const commit: PushedCommit = {
      id,
      message,
      title: message.split('\n')[0] ?? '',
      timestamp,
      authorName,
      authorEmail,
      added: [],
      modified: [],
      removed: [],
    };
    for (const line of files.split('\n')) {
      const [status = '', name] = line.split('\t');
      if (!name) continue;
      const list = status.startsWith('A') ? commit.added : status.startsWith('D') ? commit.removed : commit.modified;
      if (list.length < HOOK_FILES) list.push(name);
    }
    commits.push(commit);
  }
  return commits.reverse();
}

/** An annotated tag's message; null for a lightweight tag. */
async function tagMessage(repo: string, ref: string): Promise<string | null> {
  const out = await git(['for-each-ref', '--format=%(objecttype)%1f%(contents)', ref], { cwd: repo }).catch(() => '');
  const [type, contents = ''] = out.split(FIELD);
  return type === 'tag' ? contents.trim() || null : null;
}

async function commitOf(repo: string, oid: string): Promise<string | null> {
  const out = await git(['rev-parse', '--verify', '--quiet', `${oid}^{commit}`], { cwd: repo }).catch(() => '');
  return out.trim() || null;
}

/**
 * What each applied command means for the activity feed (reference §2.6): action, ref
 * type, the commits it brought and the newest commit's title. Only branches and tags count.
 * A (type, action) group of more than `detailLimit` refs (PUSH_EVENT_ACTIVITIES_LIMIT, at most
 * 50) becomes one bulk event without details, so its refs get no git work: a push costs at most
 * 6 groups x `detailLimit` refs x 3 git commands, however many refs it updates.
 */
export async function describePush(
  repo: string,
  commands: readonly RefCommand[],
  defaultBranch: string,
  detailLimit: number,
): Promise<PushedRef[]> {
  const refs: PushedRef[] = [];
  const groups = new Map<string, number>();
  const typed = commands.flatMap((c) => {
    const refType = c.ref.startsWith('refs/heads/') ? 'branch' : c.ref.startsWith('refs/tags/') ? 'tag' : null;
    if (!refType) return [];
    const action = ZERO.test(c.oldOid) ? 'created' : ZERO.test(c.newOid) ? 'removed' : 'pushed';
    const key = `${refType}:${action}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
    return [{ ...c, refType, action, key } as const];
  });
  const defaultRef = `refs/heads/${defaultBranch}`;
  const defaultExists = (await commitOf(repo, defaultRef)) !== null;
  for (const c of typed) {
    const base: PushedRef = {
      ref: c.ref.replace(/^refs\/(heads|tags)\//, ''),
      refType: c.refType,
      action: c.action,
      commitFrom: c.action === 'created' ? null : c.oldOid,
      commitTo: c.action === 'removed' ? null : c.newOid,
      commitCount: 0,
      commitTitle: null,
    };
    if (c.action === 'removed' || (groups.get(c.key) ?? 0) > detailLimit) {
      refs.push(base);
      continue;
    }
    const commit = await commitOf(repo, c.newOid);
    let commitCount = 0;
    let range: string[] = [];
    if (c.refType === 'tag') commitCount = commit ? 1 : 0;
    else if (c.action === 'pushed') range = [`${c.oldOid}..${c.newOid}`];
    else if (c.ref === defaultRef || !defaultExists) range = [c.newOid];
    else range = [c.newOid, '--not', defaultRef];
    if (range.length > 0) commitCount = await count(repo, range);
    const message = commit ? await git(['show', '-s', '--format=%B', commit], { cwd: repo }).catch(() => '') : '';
    const extra: Partial<PushedRef> =
      c.refType === 'tag'
        ? { tagMessage: await tagMessage(repo, c.ref) }
        : { commits: commitCount > 0 ? await hookCommits(repo, range) : [] };
    refs.push({ ...base, commitCount, commitTitle: truncateTitle(message), ...extra });
  }
  return refs;
}
