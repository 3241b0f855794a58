import { newId } from '../../../lib/ident';
import { createLogger, silentLogger } from '../../../lib/log';
import { SecretKeyRefusedError } from '../../../lib/secrets/errors';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import type { TokenSealer } from '../../../lib/secrets/token-sealer';
import { ConnectionService } from '../../../lib/sync/connections';
import { ResealInputError } from '../../../lib/sync/errors';
import { parseResealInput, resealTokens } from '../../../lib/sync/reseal';
import { MemorySyncStore } from './memory-sync-store';

/** The reseal over an in-memory store and the keyring (a rotation): its counts, cursor and guards. */
const oldKey = newKeyringEntry('2026a');
const newKey = newKeyringEntry('2026b');
const ring = (text: string) => new SecretSealer(parseKeyring(text).keyring!);
const rotated = ring(`${newKey},${oldKey}`);

async function seeded(n: number) {
  const store = new MemorySyncStore();
  const before = new ConnectionService({ store, sealer: async () => ring(oldKey) });
  const users = Array.from({ length: n }, () => newId()).sort();
  for (const u of users) await before.putConnection(u, `tok.${u}`, Date.UTC(2026, 11, 6));
  const after = (sealer: TokenSealer = ring(newKey)) => new ConnectionService({ store, sealer: async () => sealer });
  return { store, users, after };
}
const zero = { scanned: 0, resealed: 0, current: 0, changed: 0, unreadable: 0 };

it('re-seals every value under the current key; the old key can then go, and a second run finds all current', async () => {
  const { store, users, after } = await seeded(5);
  const result = await resealTokens({ store, sealer: rotated, log: silentLogger }, { pageSize: 2 });
  expect(result).toEqual({ done: true, counts: { ...zero, scanned: 5, resealed: 5 } });
  for (const u of users) expect(await after().connectionToken(u)).toBe(`tok.${u}`);
  expect((await resealTokens({ store, sealer: rotated, log: silentLogger })).counts).toEqual({
    ...zero,
    scanned: 5,
    current: 5,
  });
});

it('stops after `limit` with the cursor to resume from; the resumed run does the rest, once', async () => {
  const { store, users } = await seeded(7);
  const deps = { store, sealer: rotated, log: silentLogger };
  const pages: Array<string | undefined> = [];
  const first = await resealTokens(deps, { limit: 3, pageSize: 2, onPage: (p) => pages.push(p.cursor) });
  expect(first).toEqual({ done: false, cursor: users[2], counts: { ...zero, scanned: 3, resealed: 3 } });
  expect(pages).toEqual([users[1], users[2]]);
  const rest = await resealTokens(deps, { cursor: first.cursor });
  expect(rest).toEqual({ done: true, counts: { ...zero, scanned: 4, resealed: 4 } });
  expect(store.calls.replaceSealedToken).toBe(7);
});

it('stopped before its first page (a deadline), it resumes from the start', async () => {
  const { store } = await seeded(2);
  expect(await resealTokens({ store, sealer: rotated, log: silentLogger }, { stop: () => true })).toEqual({
    done: false,
    cursor: undefined,
    counts: zero,
  });
});

it('never overwrites a token replaced between its read and its write: counted as changed', async () => {
  const { store, users, after } = await seeded(3);
  const replace = store.replaceSealedToken.bind(store);
  store.replaceSealedToken = async (user, old, next) => {
    // The user posts a new token exactly between the reseal's read and its conditional write.
    if (user === users[1]) await after(ring(newKey)).putConnection(user, 'tok.newer', Date.now());
    return replace(user, old, next);
  };
  const result = await resealTokens({ store, sealer: rotated, log: silentLogger });
  expect(result.counts).toEqual({ ...zero, scanned: 3, resealed: 2, changed: 1 });
  expect(await after().connectionToken(users[1])).toBe('tok.newer');
});

it('leaves an unreadable value as it is and goes on, naming its user in the log', async () => {
  const { store, users } = await seeded(3);
  store.conns.get(users[0])!.sealed = store.conns.get(users[1])!.sealed; // copied from another row
  const lines: string[] = [];
  const log = createLogger({}, { write: (l) => lines.push(l) });
  const result = await resealTokens({ store, sealer: rotated, log });
  expect(result.counts).toEqual({ ...zero, scanned: 3, resealed: 2, unreadable: 1 });
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0])).toMatchObject({ event: 'sync_reseal_unreadable', user_id: users[0] });
  expect(lines[0]).not.toMatch(/tok\./);
});

it('stops at a refused key: it would refuse every value', async () => {
  const { store } = await seeded(20);
  const refusing: TokenSealer = {
    opens: (s) => rotated.opens(s),
    isCurrent: () => false,
    open: async () => Promise.reject(new SecretKeyRefusedError('Decrypt', 'k', 'the key is disabled')),
    seal: (p, c) => rotated.seal(p, c),
  };
  await expect(resealTokens({ store, sealer: refusing, log: silentLogger }, { concurrency: 4 })).rejects.toThrow(
    /the key is disabled/,
  );
  expect(store.calls.replaceSealedToken).toBeUndefined();
  expect(store.calls.sealedTokenPage).toBe(1);
});

it('`all` re-seals current values too (after the KMS key itself was replaced)', async () => {
  const { store } = await seeded(2);
  const current = ring(oldKey);
  const result = await resealTokens({ store, sealer: current, log: silentLogger }, { all: true });
  expect(result.counts).toEqual({ ...zero, scanned: 2, resealed: 2 });
});

describe('the input `{cursor?, limit?, all?}`', () => {
  it('takes nothing, or each field', () => {
    expect(parseResealInput(undefined)).toEqual({});
    expect(parseResealInput({ cursor: '01kbx0r0n3vz1k3wq2b8b0e4mf', limit: 500, all: true })).toEqual({
      cursor: '01kbx0r0n3vz1k3wq2b8b0e4mf',
      limit: 500,
      all: true,
    });
  });

  it.each([
    ['a list', [1], /must be an object/],
    ['an unknown field', { cursr: 'x' }, /unknown fields: cursr/],
    ['a cursor with a slash', { cursor: 'a/b' }, /`cursor` must be/],
    ['a limit of 0', { limit: 0 }, /`limit` must be/],
    ['a limit as text', { limit: '10' }, /`limit` must be/],
    ['all as text', { all: 'yes' }, /`all` must be/],
  ])('refuses %s', (_label, value, message) => {
    expect(() => parseResealInput(value)).toThrow(ResealInputError);
    expect(() => parseResealInput(value)).toThrow(message);
  });
});
