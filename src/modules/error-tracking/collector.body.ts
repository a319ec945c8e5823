import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { BadRequestError, PayloadTooLargeError } from '../../infra/errors/index.js';
import { jsonTextTooDeep } from '../../infra/json-depth.js';

/** Sentry's store limits (reference C4), applied to both endpoints. */
export const MAX_COMPRESSED_BYTES = 200 * 1024;
export const MAX_DECOMPRESSED_BYTES = 1024 * 1024;

export const PARSE_FAILURE = '400 Bad request - Failed to parse sentry request';

export function parseFailure(detail: string): BadRequestError {
  return new BadRequestError(`${PARSE_FAILURE}: ${detail}`);
}

function tooLarge(what: string): PayloadTooLargeError {
  return new PayloadTooLargeError(`413 Request Entity Too Large - ${what}`);
}

function bounded(decode: () => Buffer): Buffer {
  try {
    return decode();
  } catch (error) {
    // zlib reports an output over maxOutputLength as ERR_BUFFER_TOO_LARGE (a RangeError).
    const code = (error as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      throw tooLarge(`decompressed body is over ${MAX_DECOMPRESSED_BYTES} bytes`);
    }
    throw parseFailure('body could not be decompressed');
  }
}

/**
 * The request body as bytes after `Content-Encoding` (reference C3: gzip, deflate, br).
 * Decompression stops at 1 MB of output (`maxOutputLength`), so a small bomb never
 * inflates past the limit in memory.
 */
export function decodeBody(raw: Buffer, contentEncoding: string | undefined): Buffer {
  const encodings = (contentEncoding ?? '')
    .toLowerCase()
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e && e !== 'identity');
  if (encodings.length > 1) throw parseFailure('only one content encoding is supported');
  const encoding = encodings[0];
  if (!encoding) {
    if (raw.length > MAX_DECOMPRESSED_BYTES) throw tooLarge(`body is over ${MAX_DECOMPRESSED_BYTES} bytes`);
    return raw;
  }
  if (raw.length > MAX_COMPRESSED_BYTES) throw tooLarge(`compressed body is over ${MAX_COMPRESSED_BYTES} bytes`);
  const options = { maxOutputLength: MAX_DECOMPRESSED_BYTES };
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return bounded(() => gunzipSync(raw, options));
    case 'deflate':
      // HTTP "deflate" is zlib-wrapped (RFC 9110 §8.4.1.2); some clients send raw deflate.
      return bounded(() => {
        try {
          return inflateSync(raw, options);
        } catch (error) {
          if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw error;
          return inflateRawSync(raw, options);
        }
      });
    case 'br':
      return bounded(() => brotliDecompressSync(raw, options));
    default:
      throw parseFailure(`unsupported content encoding ${encoding}`);
  }
}

/**
 * A store body: one JSON event, or (older SDKs, reference C3) base64 of zlib-deflated JSON
 * sent without a Content-Encoding.
 */
export function parseStoreBody(body: Buffer): Record<string, unknown> {
  let text = body.toString('utf8').trim();
  if (!text.startsWith('{') && /^[A-Za-z0-9+/=\s]+$/.test(text)) {
    const packed = Buffer.from(text, 'base64');
    if (packed.length > MAX_COMPRESSED_BYTES) throw tooLarge(`compressed body is over ${MAX_COMPRESSED_BYTES} bytes`);
    text = bounded(() => inflateSync(packed, { maxOutputLength: MAX_DECOMPRESSED_BYTES })).toString('utf8');
  }
  return parseJsonObject(text, 'event');
}

/** Deeper than any SDK sends (they normalise context to a few levels), far from the stack's limit. */
const MAX_JSON_DEPTH = 100;

export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  // Stored events are serialised again (JSON.stringify recurses): a document deep enough to
  // overflow the stack would fail its request, or every later read of it, with a 500. Judged
  // from the text, before JSON.parse builds every level (issue 18); for valid JSON the text's
  // brackets are its nesting, so the parsed value needs no second walk.
  if (jsonTextTooDeep(text, MAX_JSON_DEPTH)) throw parseFailure(`${what} nests deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw parseFailure(`${what} is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw parseFailure(`${what} is not a JSON object`);
  return value as Record<string, unknown>;
}
