import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { v1, v2 } from '../support/downloads';
import { call, type Answer } from '../support/http';
import { httpUrl, stackDefinition } from '../support/stack';
import { buildTorrent } from '../support/torrent-build';

/**
 * GET /openapi.json against the stack: public, it names every route of serverless.yml, and the real answers of
 * the routes match the schemas it gives for their statuses (ajv, JSON Schema 2020-12).
 */
type Doc = { openapi: string; paths: Record<string, Record<string, any>> }; // eslint-disable-line @typescript-eslint/no-explicit-any
let doc: Doc;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

beforeAll(async () => {
  const res = await fetch(httpUrl('/openapi.json'));
  expect(res.status).toBe(200);
  doc = (await res.json()) as Doc;
});

/** The answer against the document's schema for its route and status. */
function matches(method: string, path: string, answer: Answer): void {
  const op = doc.paths[path]?.[method.toLowerCase()];
  expect(op).toBeDefined();
  const response = op.responses[String(answer.status)];
  if (!response) throw new Error(`${method} ${path}: the document has no ${answer.status} answer`);
  const schema = response.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} ${answer.status}: no JSON schema`);
  const validate = ajv.compile(schema);
  if (!validate(answer.body))
    throw new Error(
      `${method} ${path} ${answer.status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(answer.body)}`,
    );
}

it('is served without a token, as OpenAPI 3.1', () => {
  expect(doc.openapi).toBe('3.1.0');
});

it('names every HTTP route of serverless.yml, and no other', () => {
  type Fn = { events?: Array<{ httpApi?: { method: string; path: string } }> };
  const routes = Object.values((stackDefinition() as unknown as { functions: Record<string, Fn> }).functions)
    .flatMap((fn) =>
      (fn.events ?? []).flatMap((e) => (e.httpApi ? [`${e.httpApi.method.toUpperCase()} ${e.httpApi.path}`] : [])),
    )
    .sort();
  const inDoc = Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
  expect(inDoc).toEqual(routes);
});

it('the downloads routes answer as the document says, each status', async () => {
  const [a, b] = [v1(), v2()];
  const created = await call('POST', '/downloads', { magnet: `magnet:?xt=urn:btih:${a.infohash}&dn=openapi` });
  matches('POST', '/downloads', created);
  matches('POST', '/downloads', await call('POST', '/downloads', { infohashes: [a.infohash] }));
  matches(
    'POST',
    '/downloads',
    await call('POST', '/downloads', { torrent_base64: buildTorrent('hybrid').file.toString('base64') }),
  );
  matches('POST', '/downloads', await call('POST', '/downloads', { magnet: 'magnet:?nothing' }));
  matches(
    'POST',
    '/downloads',
    await call('POST', '/downloads', { infohashes: [a.infohash] }, { authorization: undefined }),
  );
  const id = created.body.id as string;
  matches('GET', '/downloads', await call('GET', '/downloads?limit=2'));
  matches('GET', '/downloads/{id}', await call('GET', `/downloads/${id}`));
  matches('GET', '/downloads/{id}', await call('GET', '/downloads/01nosuchdownload0000000000'));
  matches(
    'POST',
    '/downloads/{id}/infohashes',
    await call('POST', `/downloads/${id}/infohashes`, { infohashes: [b.infohash] }),
  );
  const other = await call('POST', '/downloads', { infohashes: [v1().infohash] });
  matches(
    'POST',
    '/downloads/{id}/infohashes',
    await call('POST', `/downloads/${other.body.id}/infohashes`, { infohashes: [a.infohash] }),
  );
  matches('POST', '/downloads/{id}/state', await call('POST', `/downloads/${id}/state`, { state: 'cancelled' }));
  matches('POST', '/downloads/{id}/state', await call('POST', `/downloads/${id}/state`, { state: 'queued' }));
  matches('POST', '/downloads/{id}/retry', await call('POST', `/downloads/${id}/retry`));
});

it('the health routes answer as the document says', async () => {
  matches('GET', '/healthcheck', await call('GET', '/healthcheck', undefined, { authorization: undefined }));
  matches('GET', '/healthcheck/deep', await call('GET', '/healthcheck/deep'));
});
