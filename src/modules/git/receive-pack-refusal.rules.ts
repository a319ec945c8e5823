import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { PushCommandReader } from './push-events.rules.js';

const FLUSH = Buffer.from('0000');
/** Data bytes per side-band packet: 65520 (side-band-64k) or 1000 (side-band), less length and band. */
const BAND_DATA = { 'side-band-64k': 65515, 'side-band': 995 } as const;

/**
 * A receive-pack answer refusing every ref of a push with `message`, or `null` when the body
 * holds no ref command (not a git client): the caller then answers 403 as usual.
 *
 * Git prints the body of a refused `info/refs`, but not that of a refused POST (it only says
 * "RPC failed; HTTP 403"). A push that passed `info/refs` just before a move began is refused
 * at the POST, so it is answered like receive-pack refusing it: the message on the progress
 * band (shown as `remote: …`) when git asked for one, and each ref `ng` with the message.
 */
export async function refusalReport(body: Readable, contentEncoding: string | undefined, message: string): Promise<Buffer | null> {
  const encoding = contentEncoding?.trim().toLowerCase();
  if (encoding && encoding !== 'gzip' && encoding !== 'x-gzip' && encoding !== 'identity') return null;
  const reader = await readCommands(body, encoding === 'gzip' || encoding === 'x-gzip');
  return refusalOf(reader, message);
}

/**
 * The same answer from commands already read (a push refused while it streamed to git, as
 * one past GIT_MAX_PUSH_SIZE), or `null` when there were none.
 */
export function refusalOf(reader: PushCommandReader, message: string): Buffer | null {
  if (reader.commands.length === 0) return null;
  const report = Buffer.concat([
    pkt(Buffer.from('unpack ok\n')),
    ...reader.commands.map((c) => pkt(Buffer.from(`ng ${c.ref} ${message}\n`))),
    FLUSH,
  ]);
  const band = reader.capabilities.includes('side-band-64k')
    ? BAND_DATA['side-band-64k']
    : reader.capabilities.includes('side-band')
      ? BAND_DATA['side-band']
      : 0;
  if (band === 0) return report;
  const packets = [pkt(Buffer.concat([Buffer.from([2]), Buffer.from(`${message}\n`)]))];
  for (let at = 0; at < report.length; at += band) {
    packets.push(pkt(Buffer.concat([Buffer.from([1]), report.subarray(at, at + band)])));
  }
  return Buffer.concat([...packets, FLUSH]);
}

function pkt(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from((data.length + 4).toString(16).padStart(4, '0')), data]);
}

/**
 * Reads the command list only; the pack after it is left to flow away unread (never into
 * memory). The stream is not destroyed: that would close the connection before the answer.
 */
function readCommands(body: Readable, gzip: boolean): Promise<PushCommandReader> {
  const reader = new PushCommandReader();
  const gunzip = gzip ? createGunzip() : null;
  const source = gunzip ? body.pipe(gunzip) : body;
  return new Promise((resolve) => {
    const stop = () => {
      source.off('data', onData);
      source.off('end', stop);
      source.off('error', stop);
      if (gunzip) {
        body.unpipe(gunzip);
        gunzip.on('error', () => undefined).destroy();
      }
      body.resume();
      resolve(reader);
    };
    const onData = (chunk: Buffer) => {
      reader.feed(chunk);
      if (reader.finished) stop();
    };
    source.on('data', onData);
    source.once('end', stop);
    source.once('error', stop);
  });
}
