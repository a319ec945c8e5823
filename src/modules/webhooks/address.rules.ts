import { BlockList, isIP } from 'node:net';

/**
 * Networks a webhook may not reach unless WEBHOOK_ALLOW_LOCAL_NETWORK is on (the established
 * product's "Allow requests to the local network"): this host, private and shared address space,
 * link-local (cloud metadata lives there), unique-local, multicast and reserved ranges.
 */
const LOCAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  LOCAL.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  LOCAL.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`), if any. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:(?:0:)?|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1]) return dotted[1];
  const hex = /^(?:::ffff:(?:0:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex?.[1] || !hex[2]) return null;
  const high = Number.parseInt(hex[1], 16);
  const low = Number.parseInt(hex[2], 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Whether an IP address (v4 or v6 text) is on a network webhooks may not reach by default. */
export function isLocalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return LOCAL.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    return v4 !== null ? LOCAL.check(v4, 'ipv4') : LOCAL.check(address, 'ipv6');
  }
  // Not an address at all: refuse rather than guess.
  return true;
}

export const LOCAL_NETWORK_REFUSED = 'Requests to the local network are not allowed';

/** A URL's host as an address literal (brackets of IPv6 removed), or null for a name. */
export function addressLiteral(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; message: string };

/**
 * What a hook's URL must be before anything is resolved: http or https, a host, no credentials
 * in it (the secret token is the way to authenticate), at most 2,048 characters.
 */
export function checkHookUrl(raw: string): UrlCheck {
  if (raw.length > 2048) return { ok: false, message: 'is too long (maximum is 2048 characters)' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: 'is blocked: Only allowed schemes are http, https' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, message: 'is blocked: Only allowed schemes are http, https' };
  if (url.hostname === '') return { ok: false, message: 'is blocked: URL is invalid' };
  if (url.username !== '' || url.password !== '') return { ok: false, message: 'must not contain credentials (use the secret token)' };
  return { ok: true, url };
}
