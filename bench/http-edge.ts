import { grantJson, newToken, SCOPES } from '../lib/auth/tokens';
import { newId } from '../lib/ident';
import { BenchStack, report, Row, throughput } from './support';

/**
 * The cost of the HTTP edge through serverless offline: what a refusal costs
 * at each layer, against a full authorised request that reaches its handler
 * (GET /downloads/<malformed id>: authorizer + handler, no storage call).
 * Tokens for this run are made here and given to the stack (edgeTokens).
 */
const tokens = { all: newToken(), syncOnly: newToken() };

export const edgeTokens = JSON.stringify([
  grantJson('bench-all', tokens.all, SCOPES),
  grantJson('bench-sync', tokens.syncOnly, ['sync:read']),
]);

export async function httpEdge(bench: BenchStack, ops = 600, concurrency = 8): Promise<Row[]> {
  const base = bench.stack.services.find((s) => s.name === 'serverless-offline')?.url;
  if (!base) throw new Error('the edge bench needs serverless offline');
  const get = (authorization?: string) => async () => {
    const res = await fetch(`${base}/downloads/not-an-id-${newId()}`, {
      headers: authorization ? { authorization } : {},
    });
    await res.arrayBuffer();
    return res.status;
  };
  const cases: Array<[string, number, () => Promise<number>, string]> = [
    ['authorised, handler answers 404', 404, get(`Bearer ${tokens.all}`), 'authorizer + handler'],
    ['no token → 401', 401, get(), 'API Gateway alone, no Lambda'],
    ['unknown token → 401', 401, get(`Bearer ${newToken()}`), 'authorizer only'],
    ['token without the scope → 403', 403, get(`Bearer ${tokens.syncOnly}`), 'authorizer only'],
  ];
  const rows: Row[] = [];
  for (const [name, expected, send, note] of cases) {
    const status = await send();
    if (status !== expected) throw new Error(`${name}: expected ${expected}, got ${status}`);
    await throughput(100, concurrency, send); // warm-up
    rows.push({ name, opsPerSecond: await throughput(ops, concurrency, send), note });
  }
  return rows;
}

export function reportHttpEdge(rows: Row[]): void {
  report('HTTP edge through serverless offline (8 in flight)', rows);
}
