import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The connector as its Docker image runs it: one esbuild bundle (the
 * Dockerfile's flags), plain node, no tsx. A bad definition stops it at once
 * with a structured log line naming the problem, never a half-started process.
 */
describe('connector bundle', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tss-connector-'));
  const bundle = path.join(dir, 'main.js');
  beforeAll(async () => {
    await build({
      entryPoints: [path.resolve(__dirname, '../../../connector/main.ts')],
      bundle: true,
      platform: 'node',
      target: 'node24',
      keepNames: true,
      outfile: bundle,
      logLevel: 'silent',
    });
  }, 60_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const run = (env: Record<string, string>) => {
    const out = spawnSync(process.execPath, [bundle], {
      env: { PATH: process.env.PATH, HEALTH_PORT: '0', ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });
    const lines = out.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    return { status: out.status, lines };
  };

  it('refuses a missing definition, and one without any nats function, with exit 1 and the reason logged', () => {
    const missing = run({ SERVICE_DEFINITION: path.join(dir, 'nope.json') });
    expect(missing.status).toBe(1);
    expect(missing.lines.at(-1)).toMatchObject({
      level: 'error',
      event: 'connector_failed',
      err: { name: 'DefinitionError', code: 'DEFINITION_INVALID' },
    });

    const file = path.join(dir, 'no-nats.json');
    fs.writeFileSync(file, JSON.stringify({ functions: { api: { name: 'svc-prod-api', events: [{ httpApi: {} }] } } }));
    // An unreachable NATS is never tried: the definition is read first.
    const empty = run({ SERVICE_DEFINITION: file, NATS_URL: 'nats://127.0.0.1:1' });
    expect(empty.status).toBe(1);
    expect(empty.lines.at(-1)).toMatchObject({
      event: 'connector_failed',
      err: { message: expect.stringContaining('no function has a nats event') },
    });
  });

  it('refuses a bad setting by name', () => {
    const bad = run({ CONNECTOR_MAX_INFLIGHT: '0' });
    expect(bad.status).toBe(1);
    expect(JSON.stringify(bad.lines.at(-1))).toContain('CONNECTOR_MAX_INFLIGHT');
  });
});
