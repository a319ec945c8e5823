import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../infra/http/response-types.js';

// Answers of the probes under /-/ (operations/index.ts). They are not part of the API document
// (the collector leaves /-/ out), but Fastify serialises them with these schemas all the same.

const Status = StringEnum(['ok', 'failed']);

/** `/-/health` and `/-/liveness`: the process answers. */
export const Health = Type.Object({ status: Type.Literal('ok') });

/** `/-/readiness`: 200 when every check passes (503 otherwise); the checks only to MONITORING_ALLOWLIST. */
export const Readiness = Type.Object({
  status: Status,
  checks: Type.Optional(Type.Record(Type.String(), Type.Object({ status: Status, message: Type.Optional(Type.String()) }))),
});
