import { build } from 'esbuild';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DomainError } from '../../../lib/errors';
import { toHttpError } from '../../../lib/http/errors';
import {
  IdempotencyInProgressError,
  IdempotencyKeyInvalidError,
  IdempotencyKeyReusedError,
} from '../../../lib/idempotency/errors';
import { ActiveExistsError, InvalidTransitionError, NotACandidateError } from '../../../lib/downloads/errors';
import { TorrentClientAuthError } from '../../../lib/torrents/errors';

const root = path.resolve(__dirname, '../../..');

describe('DomainError', () => {
  it('names every refusal after its class, subclasses of subclasses included', () => {
    expect(new InvalidTransitionError('d', 'queued', 'queued', 'why').name).toBe('InvalidTransitionError');
    const auth = new TorrentClientAuthError('Fails.', 401);
    expect(auth).toMatchObject({ name: 'TorrentClientAuthError', code: 'TORRENT_CLIENT_AUTH', upstreamStatus: 401 });
    expect(String(new IdempotencyKeyReusedError())).toMatch(/^IdempotencyKeyReusedError: /);
  });

  it('maps to HTTP by its own status, code and Retry-After: the edge imports no domain', () => {
    expect(toHttpError(new IdempotencyKeyInvalidError('empty'))).toEqual({
      status: 400,
      body: { error: { code: 'IDEMPOTENCY_KEY_INVALID', message: 'invalid Idempotency-Key: empty' } },
    });
    expect(toHttpError(new IdempotencyKeyReusedError()).status).toBe(422);
    expect(toHttpError(new IdempotencyInProgressError())).toMatchObject({
      status: 409,
      headers: { 'retry-after': '1' },
      body: { error: { code: 'IDEMPOTENCY_IN_PROGRESS' } },
    });
    expect(toHttpError(new InvalidTransitionError('d', 'queued', 'queued', 'why'))).not.toHaveProperty('headers');
    // Details given to the constructor are what the caller sees beside code and message.
    expect(toHttpError(new ActiveExistsError('ab'.repeat(20), 'owner')).body.error).toMatchObject({
      code: 'ACTIVE_EXISTS',
      owner_id: 'owner',
      infohash: 'ab'.repeat(20),
    });
    expect(toHttpError(new NotACandidateError('d', 'c')).body.error).toMatchObject({ candidate_id: 'c' });
    expect(toHttpError(new InvalidTransitionError('d', 'completed', 'queued', 'x')).body.error.state).toBe('completed');
    const httpErrors = fs.readFileSync(path.join(root, 'lib/http/errors.ts'), 'utf8');
    expect(httpErrors).not.toMatch(/from '\.\.\/(idempotency|downloads|telegram|torrents|sync|scan)\b/);
  });

  // The name comes from the class (new.target.name). A bundler that renames a class to dodge a
  // collision (two `Clash` classes in one bundle become Clash and Clash2) would change what logs say,
  // unless names are kept: every bundle we ship must keep them.
  it('keeps the class name through an esbuild bundle with a name collision, as every shipped bundle is built', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tss-domain-error-'));
    try {
      const base = path.join(root, 'lib/errors/index.ts').replace(/\\/g, '/');
      const clash = (code: string) =>
        `import { DomainError } from '${base}';\nexport class Clash extends DomainError { readonly code = '${code}'; readonly status = 400; }\nexport const made = new Clash('x');\n`;
      fs.writeFileSync(path.join(dir, 'a.ts'), clash('A'));
      fs.writeFileSync(path.join(dir, 'b.ts'), clash('B'));
      fs.writeFileSync(
        path.join(dir, 'main.ts'),
        `import { made as a } from './a';\nimport { made as b } from './b';\nconsole.log(JSON.stringify([a.name, b.name]));\n`,
      );
      const names = async (keepNames: boolean) => {
        const out = await build({
          entryPoints: [path.join(dir, 'main.ts')],
          bundle: true,
          platform: 'node',
          target: 'node24',
          keepNames,
          write: false,
          logLevel: 'silent',
        });
        const logged: string[] = [];
        new Function('console', out.outputFiles[0].text)({ log: (s: string) => logged.push(s) });
        return JSON.parse(logged[0]) as string[];
      };
      expect(await names(true)).toEqual(['Clash', 'Clash']);
      // The hazard is real: without keepNames one of the two reports another name.
      expect(await names(false)).not.toEqual(['Clash', 'Clash']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is built with names kept: the Lambda bundles (serverless.yml) and the connector image (Dockerfile)', () => {
    expect(fs.readFileSync(path.join(root, 'serverless.yml'), 'utf8')).toMatch(/^\s+keepNames: true$/m);
    expect(fs.readFileSync(path.join(root, 'connector/Dockerfile'), 'utf8')).toMatch(/npx esbuild .*--keep-names/);
  });

  it('is a DomainError for every typed refusal the HTTP edge maps', () => {
    for (const err of [new IdempotencyInProgressError(), new TorrentClientAuthError('x')])
      expect(err).toBeInstanceOf(DomainError);
  });
});
