import { Type, type Static } from '@sinclair/typebox';
import type { ApiApp } from '../../infra/http/index.js';
import { NullableString } from '../../infra/http/response-types.js';

/**
 * The version Basalt reports to clients (docs/decisions.md, "Version endpoints"). Clients gate
 * features on the established product's major.minor, so this names the line whose API Basalt
 * implements: 17.x, past 17.1 (the device grant) and 17.9 (the grant without feature flag). The
 * `-basalt` suffix tells a person it is not that product; parsers read it as GitLab's own `-ee`
 * (a pre-release tag after `major.minor.patch`), so `17.9.0-basalt` still orders above 17.1.0.
 */
export const COMPATIBLE_VERSION = '17.9.0-basalt';

export const MetadataResponse = Type.Object(
  {
    version: Type.String({ description: 'The established product version whose API this server implements.' }),
    revision: Type.String({ description: "Basalt's own release." }),
    kas: Type.Object({
      enabled: Type.Boolean(),
      externalUrl: NullableString,
      externalK8sProxyUrl: NullableString,
      version: NullableString,
    }),
    enterprise: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type MetadataResponse = Static<typeof MetadataResponse>;

/**
 * `GET /api/v4/metadata` and its deprecated alias `GET /api/v4/version`, which answers the same
 * body as the established product has since 15.5. Both require authentication with a token that
 * has `read_user` (or `api`/`read_api`), as there; a job token is not on the allow-list. Basalt
 * has no agent server for Kubernetes and is not an Enterprise Edition, and says so.
 */
export function metadataRoutes(api: ApiApp, basaltVersion: string): void {
  const body: MetadataResponse = Object.freeze({
    version: COMPATIBLE_VERSION,
    revision: basaltVersion,
    kas: { enabled: false, externalUrl: null, externalK8sProxyUrl: null, version: null },
    enterprise: false,
  });
  const options = (summary: string, operationId: string) => ({
    schema: { summary, operationId, tags: ['metadata'], response: { 200: MetadataResponse } },
    config: { policy: { auth: 'required' as const, scopes: ['read_user' as const] } },
  });
  api.get('/metadata', options('Metadata of this instance', 'getMetadata'), async () => body);
  api.get('/version', options('Version of this instance (deprecated alias of /metadata)', 'getVersion'), async () => body);
}
