import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError } from '../errors/index.js';

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 20;
/**
 * The deepest offset a list serves, as the established product's instance limit (50,000): a
 * deeper OFFSET makes the database read and throw away every row before it (docs/decisions.md).
 */
export const MAX_OFFSET = 50_000;

/** The last page number an HTML list of `perPage` rows links to (pages clamp rather than refuse). */
export function deepestPage(perPage: number): number {
  return Math.floor(MAX_OFFSET / perPage) + 1;
}

/** `page` and `per_page` query parameters; merge into a route's querystring schema. */
export const PaginationQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: DEFAULT_PER_PAGE })),
};
export const PaginationSchema = Type.Object(PaginationQuery);
export type PaginationParams = Static<typeof PaginationSchema>;

export interface Page {
  readonly page: number;
  readonly perPage: number;
  readonly limit: number;
  readonly offset: number;
}

/**
 * Values above 100 are clamped, as the established product's `max_per_page` does; an offset
 * past MAX_OFFSET is 400 on every list, since every list pages through here.
 */
export function pageOf(query: PaginationParams): Page {
  const page = query.page ?? 1;
  const perPage = Math.min(query.per_page ?? DEFAULT_PER_PAGE, MAX_PER_PAGE);
  const offset = (page - 1) * perPage;
  if (offset > MAX_OFFSET) {
    throw new BadRequestError(
      `Offset pagination has a maximum allowed offset of ${MAX_OFFSET} ((page - 1) × per_page): narrow the list with its filters to reach later records`,
    );
  }
  return { page, perPage, limit: perPage, offset };
}

/**
 * Sets `X-Total`, `X-Total-Pages`, `X-Page`, `X-Per-Page`, `X-Next-Page`, `X-Prev-Page` and
 * `Link` (prev, next, first, last), keeping every query parameter of the request.
 */
export function setPaginationHeaders(request: FastifyRequest, reply: FastifyReply, page: Page, total: number, externalUrl: string): void {
  reply.headers(paginationHeaders(request, page, total, externalUrl));
}

/** The headers setPaginationHeaders sets, for answers kept with their headers. */
export function paginationHeaders(request: FastifyRequest, page: Page, total: number, externalUrl: string): Record<string, string> {
  const totalPages = Math.max(1, Math.ceil(total / page.perPage));
  const next = page.page < totalPages ? page.page + 1 : null;
  const prev = page.page > 1 ? Math.min(page.page - 1, totalPages) : null;
  const base = new URL(request.url, `${externalUrl}/`);
  const target = new URL(externalUrl);
  base.protocol = target.protocol;
  base.host = target.host;
  const prefix = target.pathname.replace(/\/$/, '');
  if (prefix && !base.pathname.startsWith(`${prefix}/`)) base.pathname = prefix + base.pathname;
  const link = (n: number, rel: string) => {
    const url = new URL(base);
    url.searchParams.set('page', String(n));
    url.searchParams.set('per_page', String(page.perPage));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links = [...(prev ? [link(prev, 'prev')] : []), ...(next ? [link(next, 'next')] : []), link(1, 'first'), link(totalPages, 'last')];
  return {
    'x-total': String(total),
    'x-total-pages': String(totalPages),
    'x-page': String(page.page),
    'x-per-page': String(page.perPage),
    'x-next-page': next ? String(next) : '',
    'x-prev-page': prev ? String(prev) : '',
    link: links.join(', '),
  };
}
