import { parseFailure, parseJsonObject } from './collector.body.js';

export interface EnvelopeItem {
  readonly type: string;
  readonly headers: Record<string, unknown>;
  readonly payload: Buffer;
}

export interface Envelope {
  readonly headers: Record<string, unknown>;
  readonly items: EnvelopeItem[];
}

/** Far above what any SDK sends (Sentry caps sessions at 100 per envelope). */
export const MAX_ITEMS = 1000;
const NEWLINE = 0x0a;

function lineEnd(body: Buffer, from: number): number {
  const end = body.indexOf(NEWLINE, from);
  return end === -1 ? body.length : end;
}

/** Only the header line, to read the `dsn` when the key is not in the query or header. */
export function parseEnvelopeHeaders(body: Buffer): Record<string, unknown> {
  return parseJsonObject(body.subarray(0, lineEnd(body, 0)).toString('utf8'), 'envelope header');
}

/**
 * Sentry envelopes (reference C4): `Headers { "\n" Item } [ "\n" ]`, `Item = Headers "\n"
 * Payload`. With `length` the payload is exactly that many bytes followed by `\n` or the end;
 * without it the payload runs to the next `\n`. Empty lines where an item header is expected
 * are skipped (some SDKs end with blank lines).
 */
export function parseEnvelope(body: Buffer): Envelope {
  const headerEnd = lineEnd(body, 0);
  const headers = parseJsonObject(body.subarray(0, headerEnd).toString('utf8'), 'envelope header');
  const items: EnvelopeItem[] = [];
  let pos = headerEnd + 1;
  while (pos < body.length) {
    const end = lineEnd(body, pos);
    const line = body.subarray(pos, end).toString('utf8');
    if (line.trim() === '') {
      pos = end + 1;
      continue;
    }
    if (items.length >= MAX_ITEMS) throw parseFailure(`envelope has more than ${MAX_ITEMS} items`);
    const itemHeaders = parseJsonObject(line, `item header ${items.length + 1}`);
    const type = itemHeaders.type;
    if (typeof type !== 'string' || type === '') throw parseFailure(`item header ${items.length + 1} has no type`);
    pos = end + 1;
    const length = itemHeaders.length;
    let payload: Buffer;
    if (length !== undefined && length !== null) {
      if (typeof length !== 'number' || !Number.isInteger(length) || length < 0) {
        throw parseFailure(`item ${items.length + 1} has an invalid length`);
      }
      if (pos + length > body.length) throw parseFailure(`item ${items.length + 1} is shorter than its length`);
      payload = body.subarray(pos, pos + length);
      pos += length;
      if (pos < body.length) {
        if (body[pos] !== NEWLINE) throw parseFailure(`item ${items.length + 1} is longer than its length`);
        pos += 1;
      }
    } else {
      // The header line was the last line: an item with an empty payload.
      const payloadEnd = pos > body.length ? body.length : lineEnd(body, pos);
      payload = body.subarray(Math.min(pos, body.length), payloadEnd);
      pos = payloadEnd + 1;
    }
    items.push({ type, headers: itemHeaders, payload });
  }
  return { headers, items };
}
