import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { OPERATIONS } from '../../../functions/api/openapi';
import { PUBLIC_ROUTES, ROUTE_SCOPES } from '../../../lib/auth/scopes';
import { openApiDocument } from '../../../lib/http/openapi';

/** The OpenAPI document is built from the route table: complete, consistent, and its schemas compile. */

const doc = openApiDocument('test', OPERATIONS) as { paths: Record<string, Record<string, any>> }; // eslint-disable-line @typescript-eslint/no-explicit-any

it('has every route of the route table, with its security', () => {
  const routes = [...Object.keys(ROUTE_SCOPES), ...PUBLIC_ROUTES].sort();
  const inDoc = Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
  expect(inDoc).toEqual(routes);
  expect(doc.paths['/downloads'].post.security).toEqual([{ bearer: [] }]);
  expect(doc.paths['/downloads'].post['x-scope']).toBe('downloads:write');
  expect(doc.paths['/openapi.json'].get.security).toEqual([]);
  expect(doc.paths['/'].get.security).toEqual([{ session: [] }]);
});

it('refuses to build when a route has no operation, or an operation no route', () => {
  const { ['POST /downloads']: _dropped, ...rest } = OPERATIONS;
  expect(() => openApiDocument('x', rest)).toThrow(/undescribed POST \/downloads/);
  expect(() => openApiDocument('x', { ...OPERATIONS, 'GET /nowhere': OPERATIONS['GET /downloads'] })).toThrow(
    /unrouted GET \/nowhere/,
  );
});

it('every schema in it compiles under JSON Schema 2020-12 (strict)', () => {
  const ajv = addFormats(new Ajv2020({ strict: true, allErrors: true }));
  ajv.addKeyword('x-scope');
  let schemas = 0;
  for (const ops of Object.values(doc.paths))
    for (const op of Object.values(ops)) {
      for (const r of Object.values(op.responses as Record<string, { content?: Record<string, { schema: object }> }>))
        for (const c of Object.values(r.content ?? {})) {
          ajv.compile(c.schema);
          schemas++;
        }
      for (const c of Object.values((op.requestBody?.content ?? {}) as Record<string, { schema: object }>)) {
        ajv.compile(c.schema);
        schemas++;
      }
    }
  expect(schemas).toBeGreaterThan(40);
});

it('the request schema of POST /downloads is the one its handler validates with', () => {
  const ajv = addFormats(new Ajv2020({ strict: true }));
  const validate = ajv.compile(doc.paths['/downloads'].post.requestBody.content['application/json'].schema);
  expect(validate({ torrent_base64: 'ZDRlaW5mbw==' })).toBe(true);
  expect(validate({ torrent_base64: 'not base64!' })).toBe(false);
  expect(validate({ magnet: 'magnet:?xt=urn:btih:x', name: 'x' })).toBe(false);
});
