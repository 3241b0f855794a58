import fs from 'node:fs';
import path from 'node:path';
import { DomainError, ErrorCode } from '../../../lib/errors';
import { toHttpError } from '../../../lib/http/errors';

/**
 * Every domain error class the code base exports, found by loading every lib/
 * module: its code is in the one table (lib/errors), and the HTTP edge answers
 * with that code and the class's status. The type says so at compile time;
 * this says so for what is really loaded, classes added later included.
 */

const ROOT = path.resolve(__dirname, '../../../lib');
const files = (fs.readdirSync(ROOT, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => path.join(ROOT, f));

type ErrorClass = new (...args: unknown[]) => DomainError;
const classes = new Map<string, ErrorClass>();
for (const file of files) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- every module, found at run time
  const exported = require(file) as Record<string, unknown>;
  for (const [name, value] of Object.entries(exported)) {
    if (typeof value === 'function' && value.prototype instanceof DomainError) classes.set(name, value as ErrorClass);
  }
}

describe('domain error codes', () => {
  it('finds the domain errors of every module', () => {
    expect(classes.size).toBeGreaterThanOrEqual(20);
    expect([...classes.keys()]).toEqual(expect.arrayContaining(['InfohashTakenError', 'TorrentClientAuthError']));
  });

  it.each([...classes.entries()])('%s: its code is in the table and the HTTP answer carries it', (_name, Class) => {
    // Constructors differ (a message, a hash, an instant): the first argument list a class accepts.
    const err = [
      ['a', 'b', 'c'],
      [Date.UTC(2026, 11, 5), 1, 'refused'],
    ].flatMap((args) => {
      try {
        return [new Class(...args)];
      } catch {
        return [];
      }
    })[0];
    expect(Object.values(ErrorCode)).toContain(err.code);
    const { status, body } = toHttpError(err);
    expect(status).toBe(err.status);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(600);
    expect(body.error.code).toBe(err.code);
  });
});
