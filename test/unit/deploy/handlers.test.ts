import fs from 'node:fs';
import path from 'node:path';

/**
 * The Node.js 24 Lambda runtime dropped callback-style handlers: a handler that
 * is not async and takes three parameters `(event, context, callback)` fails
 * there. Every function's exported handler is checked the way the runtime
 * tells the two apart (arity 3+ and not an AsyncFunction).
 */
const ROOT = path.resolve(__dirname, '../../..');
const serverlessYml = fs.readFileSync(path.join(ROOT, 'serverless.yml'), 'utf8');
const handlers = [...serverlessYml.matchAll(/^\s+handler: (functions\/\S+)\.(\w+)\s*$/gm)].map((m) => ({
  file: m[1],
  name: m[2],
}));

const isCallbackStyle = (fn: unknown) =>
  typeof fn === 'function' && fn.length >= 3 && fn.constructor.name !== 'AsyncFunction';

describe('function handlers on nodejs24.x', () => {
  it('lists every function of serverless.yml', () => {
    expect(handlers.length).toBeGreaterThanOrEqual(27);
  });

  it.each(handlers.map((h) => [`${h.file}.${h.name}`, h] as const))('%s is not callback-style', async (_, h) => {
    const mod = (await import(path.join(ROOT, h.file))) as Record<string, unknown>;
    expect(typeof mod[h.name]).toBe('function');
    expect(isCallbackStyle(mod[h.name])).toBe(false);
  });

  it('tells a callback-style handler from an async one', () => {
    expect(isCallbackStyle((_e: unknown, _c: unknown, cb: () => void) => cb())).toBe(true);
    expect(isCallbackStyle(async (_e: unknown, _c: unknown, _cb: unknown) => undefined)).toBe(false);
    expect(isCallbackStyle(async (_e: unknown) => undefined)).toBe(false);
  });
});
