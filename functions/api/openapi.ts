import middy from '@middy/core';
import { downloadsOperations } from '../../lib/downloads/openapi';
import { healthOperations } from '../../lib/health/openapi';
import { openApiDocument, type Operations } from '../../lib/http/openapi';
import { json } from '../../lib/http/response';
import { invocationScope } from '../../lib/log';
import { syncOperations } from '../../lib/sync/openapi';
import { telegramOperations } from '../../lib/telegram/openapi';
import { SERVICE_VERSION } from '../../lib/version';
import { webOperations } from '../../lib/web/openapi';

/** Every route's operation, by domain: the document fails to build if one is missing (lib/http/openapi.ts). */
export const OPERATIONS: Operations = {
  ...downloadsOperations,
  ...syncOperations,
  ...webOperations,
  ...healthOperations,
  ...telegramOperations,
  'GET /openapi.json': {
    tag: 'api',
    summary: 'This document',
    responses: {
      '200': {
        description: 'the OpenAPI 3.1 document',
        json: { type: 'object', required: ['openapi'], properties: { openapi: { const: '3.1.0' } } },
      },
    },
  },
};

let document: Record<string, unknown> | undefined;

/** GET /openapi.json: public, no storage; built once per container. */
export const handler = invocationScope(
  middy().handler(async () => {
    document ??= openApiDocument(SERVICE_VERSION, OPERATIONS);
    return json(200, document, { 'cache-control': 'public, max-age=300' });
  }),
);
