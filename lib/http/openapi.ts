import { PUBLIC_ROUTES, ROUTE_SCOPES, SESSION_ROUTES } from '../auth/scopes';

/**
 * The OpenAPI 3.1 document of the HTTP API (GET /openapi.json), built, not
 * written: its routes are the route table of lib/auth/scopes.ts (which a
 * test holds to serverless.yml), its security follows that table, and each
 * domain describes its own operations with the JSON Schemas its handlers
 * validate with (lib/downloads/openapi.ts, …). A route without a described
 * operation, or an operation without a route, fails the build of the
 * document, so it cannot drift from the routes (decision 404).
 */

export type JsonSchema = Record<string, unknown>;

export interface Operation {
  summary: string;
  tag: string;
  description?: string;
  parameters?: Array<{
    name: string;
    in: 'path' | 'query' | 'header';
    required?: boolean;
    schema: JsonSchema;
    description?: string;
  }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  /** By status: a JSON schema (application/json), `html` (a page), `redirect` (303), or `text/calendar`. */
  responses: Record<string, { description: string; json?: JsonSchema; html?: true; redirect?: true; calendar?: true }>;
}

export type Operations = Record<string, Operation>;

/** `{error:{code,message,…}}` of lib/http/errors.ts. */
export const errorSchema: JsonSchema = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

/** A refusal by the authorizer is the gateway's own answer: `{"message":"Unauthorized"}` on AWS (offline adds fields). */
const gatewaySchema: JsonSchema = {
  type: 'object',
  required: ['message'],
  properties: { message: { type: 'string' } },
};

/** Answers every JSON route may give, whatever it does (the authorizer, the edge, storage). */
const COMMON_ERRORS: Record<string, string> = {
  '400': 'bad input: the message names the problem; nothing was written',
  '401': 'no valid token',
  '403': 'the token lacks the scope',
  '413': 'the body is too large',
  '503': 'storage unavailable: retry after Retry-After seconds',
};

export function openApiDocument(version: string, operations: Operations): Record<string, unknown> {
  const routes = [...Object.keys(ROUTE_SCOPES), ...PUBLIC_ROUTES];
  const missing = routes.filter((r) => !operations[r]);
  const extra = Object.keys(operations).filter((r) => !routes.includes(r));
  if (missing.length || extra.length)
    throw new Error(
      `OpenAPI operations and routes differ: undescribed ${missing.join(', ') || '-'}; unrouted ${extra.join(', ') || '-'}`,
    );

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes.sort()) {
    const [method, path] = route.split(' ');
    const op = operations[route];
    const isPublic = PUBLIC_ROUTES.includes(route);
    const isSession = SESSION_ROUTES.includes(route);
    const pathParameters = [...path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(op.responses)) responses[status] = response(r);
    if (!isSession)
      for (const [status, description] of Object.entries(COMMON_ERRORS))
        if (!responses[status] && !(isPublic && (status === '401' || status === '403')))
          responses[status] = response({
            description,
            json: status === '401' || status === '403' ? gatewaySchema : errorSchema,
          });
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = {
      operationId: operationId(route),
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.tag],
      security: isPublic ? [] : [isSession ? { session: [] } : { bearer: [] }],
      ...(isPublic ? {} : { 'x-scope': ROUTE_SCOPES[route] }),
      parameters: [
        ...pathParameters.filter((p) => !op.parameters?.some((q) => q.name === p.name && q.in === 'path')),
        ...(op.parameters ?? []),
      ],
      ...(op.requestBody ? { requestBody: op.requestBody } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'torrent-scan-sync',
      version,
      description:
        'Downloads, scan and sync of torrent-scan-sync. Bearer routes take an API token (`Authorization: Bearer …`, docs/security.md); the web UI routes a session cookie.',
    },
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'an API token; the scope each route needs is its x-scope',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'tss_session',
          description: 'the web UI session (POST /signin)',
        },
      },
    },
  };
}

function response(r: Operation['responses'][string]): Record<string, unknown> {
  if (r.json) return { description: r.description, content: { 'application/json': { schema: r.json } } };
  if (r.html) return { description: r.description, content: { 'text/html': { schema: { type: 'string' } } } };
  if (r.calendar) return { description: r.description, content: { 'text/calendar': { schema: { type: 'string' } } } };
  if (r.redirect)
    return { description: r.description, headers: { location: { schema: { type: 'string' }, required: true } } };
  return { description: r.description };
}

/** `POST /downloads/{id}/retry` → `post_downloads_id_retry`: stable, from the route alone. */
function operationId(route: string): string {
  return route
    .toLowerCase()
    .replace(/[{}]/g, '')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
}
