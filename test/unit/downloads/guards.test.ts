import {
  ActiveExistsError,
  InfohashTakenError,
  InvalidTransitionError,
  TooManyInfohashesError,
} from '../../../lib/downloads/errors';
import {
  afterCreateRefused,
  chooseSurvivor,
  importable,
  importedAsFailed,
  movingHashes,
  ownerOfAll,
  planActivate,
  planAppend,
  planCreate,
  planDetails,
  planImport,
  planMerge,
  planSetState,
  PlannedWrite,
  refusalOf,
  refuseReactivation,
  refuseSharedHashes,
  withinCap,
  WritePlan,
} from '../../../lib/downloads/guards';
import { Infohash, MAX_INFOHASHES } from '../../../lib/downloads/infohash';
import { guardKey } from '../../../lib/downloads/keys';
import { Download, DownloadState } from '../../../lib/downloads/model';

/**
 * The decisions behind "at most one active download per infohash", on plain
 * values: what each guarded operation writes, under which condition, and
 * what it refuses. The same operations against DynamoDB Local, under races:
 * test/integration/downloads/store.test.ts.
 */

const AT = '2026-12-05T08:00:00.000Z';
let seq = 0;
const v1 = (n = ++seq): Infohash => ({ infohash: n.toString(16).padStart(40, '0'), kind: 'v1' });
const v2 = (n = ++seq): Infohash => ({ infohash: n.toString(16).padStart(64, '0'), kind: 'v2' });
const dl = (over: Partial<Download> = {}): Download => ({
  id: '01jeaaaaaaaaaaaaaaaaaaaaaa',
  state: 'downloading',
  name: 'Sintel',
  infohashes: [v1()],
  created_at: '2026-12-01T00:00:00.000Z',
  updated_at: '2026-12-01T00:00:00.000Z',
  revision: 3,
  ...over,
});

/** The plan's writes in a form a reader checks at a glance: what, which key, under which condition. */
const shape = (plan: WritePlan) =>
  plan.writes.map((w: PlannedWrite) =>
    'put' in w
      ? { put: w.put.entity, key: `${w.put.PK as string}/${w.put.SK as string}`, when: w.when }
      : { delete: `${w.delete.PK}/${w.delete.SK}`, when: w.when },
  );
const writeOf = (d: ReturnType<typeof planActivate>) => {
  if (!('write' in d)) throw new Error(`expected a plan, got ${JSON.stringify(d)}`);
  return d;
};

describe('owner: ownerOfAll', () => {
  const a = v1();
  const b = v2();
  const owner = dl({ infohashes: [a, b] });

  it('is the download the first guard names, active, holding every hash', () => {
    expect(ownerOfAll(owner.id, owner, [a, b])).toBe(owner);
    expect(ownerOfAll(owner.id, owner, [a])).toBe(owner);
  });

  it('is nobody when the guard is free, names another download, or the download is gone', () => {
    expect(ownerOfAll(undefined, owner, [a])).toBeUndefined();
    expect(ownerOfAll('01jezzzzzzzzzzzzzzzzzzzzzz', owner, [a])).toBeUndefined();
    expect(ownerOfAll(owner.id, undefined, [a])).toBeUndefined();
  });

  it('is nobody when the download finished (its guards are gone) or holds only some hashes (split)', () => {
    for (const state of ['completed', 'failed', 'cancelled'] as DownloadState[])
      expect(ownerOfAll(owner.id, { ...owner, state }, [a])).toBeUndefined();
    expect(ownerOfAll(owner.id, { ...owner, infohashes: [a] }, [a, b])).toBeUndefined();
  });
});

describe('owner: what a refused create does next', () => {
  it('rethrows when no guard explains the refusal', () => {
    expect(afterCreateRefused([])).toEqual({ unexplained: true });
  });

  it('dedups onto the one owner, however many of its guards refused', () => {
    expect(
      afterCreateRefused([
        { infohash: 'a', ownerId: 'X' },
        { infohash: 'b', ownerId: 'X' },
      ]),
    ).toEqual({ dedupOnto: 'X' });
  });

  it('merges several owners into the oldest, the rest absorbed oldest first', () => {
    expect(
      afterCreateRefused([
        { infohash: 'a', ownerId: '01jec' },
        { infohash: 'b', ownerId: '01jea' },
        { infohash: 'c', ownerId: '01jeb' },
        { infohash: 'd', ownerId: '01jea' },
      ]),
    ).toEqual({ merge: { survivorId: '01jea', absorbed: ['01jeb', '01jec'] } });
  });

  it('names the FIRST refused guard in the typed refusal of the plan', () => {
    const refused = [
      { infohash: 'h1', ownerId: 'X' },
      { infohash: 'h2', ownerId: 'Y' },
    ];
    const taken = refusalOf('INFOHASH_TAKEN', refused);
    expect(taken).toBeInstanceOf(InfohashTakenError);
    expect(taken).toMatchObject({ infohash: 'h1', ownerId: 'X' });
    expect(refusalOf('ACTIVE_EXISTS', refused)).toBeInstanceOf(ActiveExistsError);
    expect(refusalOf(undefined, refused)).toBeUndefined();
    expect(refusalOf('ACTIVE_EXISTS', [])).toBeUndefined();
  });
});

describe('survivor: chooseSurvivor', () => {
  it('is the smallest id (ULIDs sort by creation: the oldest), whatever order the guards came in', () => {
    const ids = ['01jef', '01jea', '01jec'];
    for (const order of [ids, [...ids].reverse(), [ids[1], ids[2], ids[0]]])
      expect(chooseSurvivor(order)).toEqual({ survivorId: '01jea', absorbed: ['01jec', '01jef'] });
  });

  it('counts an owner named twice once (ties cannot split the survivor)', () => {
    expect(chooseSurvivor(['01jeb', '01jea', '01jeb', '01jea'])).toEqual({ survivorId: '01jea', absorbed: ['01jeb'] });
  });
});

describe('moving hashes and the cap', () => {
  it('moves only the victim’s hashes the survivor lacks, in the victim’s order', () => {
    const [shared, mine, x, y] = [v1(), v1(), v2(), v1()];
    const survivor = dl({ infohashes: [shared, mine] });
    const victim = dl({ id: '01jeb', infohashes: [y, shared, x] });
    expect(movingHashes(survivor, victim)).toEqual([y, x]);
    expect(movingHashes(survivor, { ...victim, infohashes: [shared] })).toEqual([]);
  });

  it('allows exactly MAX_INFOHASHES, refuses one more', () => {
    expect(withinCap(MAX_INFOHASHES - 1, 1)).toBe(true);
    expect(withinCap(MAX_INFOHASHES, 0)).toBe(true);
    expect(withinCap(MAX_INFOHASHES, 1)).toBe(false);
    expect(withinCap(MAX_INFOHASHES - 2, 3)).toBe(false);
  });
});

describe('planCreate', () => {
  it('writes the download, then per hash its membership and its guard: new items only', () => {
    const [a, b] = [v1(), v2()];
    const d = dl({ state: 'queued', infohashes: [a, b], revision: 1, created_at: AT, updated_at: AT });
    const plan = planCreate(d);
    expect(shape(plan)).toEqual([
      { put: 'download', key: `DL#${d.id}/META`, when: { absent: true } },
      { put: 'membership', key: `IH#${a.infohash}/DL#${d.id}`, when: undefined },
      { put: 'guard', key: `IH#${a.infohash}/ACTIVE`, when: { absent: true } },
      { put: 'membership', key: `IH#${b.infohash}/DL#${d.id}`, when: undefined },
      { put: 'guard', key: `IH#${b.infohash}/ACTIVE`, when: { absent: true } },
    ]);
    expect(plan.writes[2]).toMatchObject({ put: { download_id: d.id, since: AT } });
    expect(plan.guardRefusal).toBeUndefined();
  });
});

describe('planActivate', () => {
  it('CAS first, then holds every guard (free or its own), clears the review marks', () => {
    const [a, b] = [v1(), v2()];
    const d = dl({ state: 'failed', infohashes: [a, b], review_reason: 'missing_in_client', missing_since: AT });
    const { next, write } = writeOf(planActivate(d, 'queued', AT));
    expect(next).toMatchObject({ state: 'queued', revision: 4, updated_at: AT });
    expect(next).not.toHaveProperty('review_reason');
    expect(next).not.toHaveProperty('missing_since');
    expect(shape(write)).toEqual([
      { put: 'download', key: `DL#${d.id}/META`, when: { revisionIs: 3 } },
      { put: 'guard', key: `IH#${a.infohash}/ACTIVE`, when: { freeOrHeldBy: d.id } },
      { put: 'guard', key: `IH#${b.infohash}/ACTIVE`, when: { freeOrHeldBy: d.id } },
    ]);
    expect(write.guardRefusal).toBe('ACTIVE_EXISTS');
  });
});

describe('planAppend', () => {
  const a = v1();
  const b = v2();

  it('appends the missing hashes sorted, with memberships and (active) guards; refusal: INFOHASH_TAKEN', () => {
    const d = dl({ infohashes: [b] });
    const { next, write } = writeOf(planAppend(d, [b, a, a], AT, false) as ReturnType<typeof planActivate>);
    expect(next.infohashes).toEqual([a, b]);
    expect(next.revision).toBe(4);
    expect(shape(write)).toEqual([
      { put: 'download', key: `DL#${d.id}/META`, when: { revisionIs: 3 } },
      { put: 'membership', key: `IH#${a.infohash}/DL#${d.id}`, when: undefined },
      { put: 'guard', key: `IH#${a.infohash}/ACTIVE`, when: { freeOrHeldBy: d.id } },
    ]);
    expect(write.guardRefusal).toBe('INFOHASH_TAKEN');
  });

  it('a finished download gets memberships only: it holds no guard', () => {
    const d = dl({ state: 'completed', infohashes: [b] });
    const { write } = writeOf(planAppend(d, [a], AT, false) as ReturnType<typeof planActivate>);
    expect(shape(write).map((w) => ('put' in w ? w.put : w.delete))).toEqual(['download', 'membership']);
  });

  it('writes nothing when every hash is held; refuses past the cap; a dedup onto a finished owner is notActive', () => {
    const d = dl({ infohashes: [a, b] });
    expect(planAppend(d, [b, a], AT, false)).toEqual({ unchanged: d });
    const full = dl({ infohashes: Array.from({ length: MAX_INFOHASHES }, () => v1()) });
    const refused = planAppend(full, [v2()], AT, false);
    expect('refused' in refused && refused.refused).toBeInstanceOf(TooManyInfohashesError);
    const almost = dl({ infohashes: full.infohashes.slice(1) });
    expect('write' in planAppend(almost, [v2()], AT, false)).toBe(true);
    expect(planAppend({ ...d, state: 'cancelled' }, [v1()], AT, true)).toEqual({ notActive: true });
    expect('write' in planAppend({ ...d, state: 'cancelled' }, [v1()], AT, false)).toBe(true);
  });
});

describe('planSetState', () => {
  const a = v1();

  it('leaving the active set releases exactly its own guards, records cancel time and review', () => {
    const d = dl({ infohashes: [a] });
    const { next, write } = writeOf(planSetState(d, 'downloading', 'cancelled', 'missing_in_client', AT));
    expect(next).toMatchObject({ state: 'cancelled', cancelled_at: AT, review_reason: 'missing_in_client' });
    expect(shape(write)).toEqual([
      { put: 'download', key: `DL#${d.id}/META`, when: { revisionIs: 3 } },
      { delete: `${guardKey(a.infohash).PK}/ACTIVE`, when: { ownGuard: d.id } },
    ]);
    expect(write.guardRefusal).toBeUndefined();
  });

  it('active → active touches no guard and records no review', () => {
    const { next, write } = writeOf(planSetState(dl(), 'downloading', 'paused', 'missing_in_client', AT));
    expect(next).not.toHaveProperty('review_reason');
    expect(next).not.toHaveProperty('cancelled_at');
    expect(write.writes).toHaveLength(1);
  });

  it('refuses a stale `from`, a finished download, and (before reading) terminal → active; same state is a no-op', () => {
    const d = dl();
    const stale = planSetState(d, 'queued', 'completed', undefined, AT);
    expect('refused' in stale && stale.refused).toBeInstanceOf(InvalidTransitionError);
    const done = dl({ state: 'completed' });
    const finished = planSetState(done, 'completed', 'failed', undefined, AT);
    expect('refused' in finished && finished.refused.message).toMatch(/stays finished/);
    expect(planSetState(d, 'downloading', 'downloading', undefined, AT)).toEqual({ unchanged: d });
    expect(planSetState(done, 'completed', 'completed', undefined, AT)).toEqual({ unchanged: done });
    expect(refuseReactivation(d.id, 'completed', 'queued')).toBeInstanceOf(InvalidTransitionError);
    expect(refuseReactivation(d.id, 'queued', 'completed')).toBeUndefined();
    expect(refuseReactivation(d.id, 'failed', 'cancelled')).toBeUndefined();
  });
});

describe('planDetails', () => {
  it('writes progress and missing_since only when they change; null clears', () => {
    const d = dl({ progress: 0.5, missing_since: AT });
    expect(planDetails(d, { progress: 0.5 }, AT)).toEqual({ unchanged: d });
    const { next, write } = writeOf(planDetails(d, { progress: 0.75, missing_since: null }, AT));
    expect(next).toMatchObject({ progress: 0.75, revision: 4, updated_at: AT });
    expect(next).not.toHaveProperty('missing_since');
    expect(shape(write)).toEqual([{ put: 'download', key: `DL#${d.id}/META`, when: { revisionIs: 3 } }]);
  });
});

describe('planMerge', () => {
  const [shared, own, extra] = [v1(), v2(), v1()];
  const survivor = dl({ id: '01jea', infohashes: [own], revision: 2 });
  const victim = dl({ id: '01jeb', infohashes: [shared, extra], revision: 5 });

  it('CAS on both rows, the victim cancelled into the survivor, moved guards taken only from the victim', () => {
    const plan = planMerge(survivor.id, survivor, victim, AT) as WritePlan;
    expect(shape(plan)).toEqual([
      { put: 'download', key: `DL#01jea/META`, when: { revisionIs: 2 } },
      { put: 'download', key: `DL#01jeb/META`, when: { revisionIs: 5 } },
      { put: 'membership', key: `IH#${shared.infohash}/DL#01jea`, when: undefined },
      { put: 'guard', key: `IH#${shared.infohash}/ACTIVE`, when: { takenFrom: '01jeb' } },
      { put: 'membership', key: `IH#${extra.infohash}/DL#01jea`, when: undefined },
      { put: 'guard', key: `IH#${extra.infohash}/ACTIVE`, when: { takenFrom: '01jeb' } },
    ]);
    expect(plan.writes[0]).toMatchObject({ put: { revision: 3, updated_at: AT } });
    const merged = plan.writes[0] as { put: { infohashes: Infohash[] } };
    expect(merged.put.infohashes.map((h) => h.infohash).sort()).toEqual(
      [shared, extra, own].map((h) => h.infohash).sort(),
    );
    expect(plan.writes[1]).toMatchObject({ put: { state: 'cancelled', merged_into: '01jea', revision: 6 } });
    expect(plan.writes[1]).not.toHaveProperty('put.cancelled_at');
  });

  it('a hash in both rows does not move; is stale when a row is gone or finished', () => {
    const both = planMerge(survivor.id, { ...survivor, infohashes: [own, shared] }, victim, AT) as WritePlan;
    expect(shape(both).filter((w) => 'put' in w && w.put === 'guard')).toHaveLength(1);
    expect(planMerge(survivor.id, undefined, victim, AT)).toEqual({ stale: true });
    expect(planMerge(survivor.id, survivor, undefined, AT)).toEqual({ stale: true });
    expect(planMerge(survivor.id, { ...survivor, state: 'completed' }, victim, AT)).toEqual({ stale: true });
    expect(planMerge(survivor.id, survivor, { ...victim, state: 'cancelled' }, AT)).toEqual({ stale: true });
  });

  it('refuses when the moved hashes would take the survivor past the cap (at the cap is fine)', () => {
    const many = Array.from({ length: MAX_INFOHASHES - 1 }, () => v2());
    const atCap = planMerge(survivor.id, { ...survivor, infohashes: many }, { ...victim, infohashes: [shared] }, AT);
    expect('writes' in atCap).toBe(true);
    const past = planMerge(survivor.id, { ...survivor, infohashes: many }, victim, AT);
    expect('refused' in past && past.refused).toBeInstanceOf(TooManyInfohashesError);
    expect('refused' in past && (past.refused as TooManyInfohashesError).downloadId).toBe(survivor.id);
  });
});

describe('the legacy import', () => {
  it('writes the legacy-id item FIRST, then the download, memberships and (active) guards dated updated_at', () => {
    const [a, b] = [v2(), v1()];
    const d = importable(dl({ infohashes: [a, b, a], revision: 9 }));
    expect(d.infohashes).toEqual([b, a]);
    expect(d.revision).toBe(1);
    const plan = planImport(d, '42');
    expect(shape(plan)).toEqual([
      { put: 'legacy-id', key: `LEGACY/ID#${'42'.padStart(20, '0')}`, when: { absent: true } },
      { put: 'download', key: `DL#${d.id}/META`, when: { absent: true } },
      { put: 'membership', key: `IH#${b.infohash}/DL#${d.id}`, when: undefined },
      { put: 'guard', key: `IH#${b.infohash}/ACTIVE`, when: { absent: true } },
      { put: 'membership', key: `IH#${a.infohash}/DL#${d.id}`, when: undefined },
      { put: 'guard', key: `IH#${a.infohash}/ACTIVE`, when: { absent: true } },
    ]);
    expect(plan.writes[3]).toMatchObject({ put: { since: d.updated_at } });
    expect(shape(planImport(importedAsFailed(d), '42')).filter((w) => 'put' in w && w.put === 'guard')).toEqual([]);
  });

  it('refuses no hash or too many, and two rows of one batch sharing a hash', () => {
    expect(() => importable(dl({ infohashes: [] }))).toThrow(RangeError);
    expect(() => importable(dl({ infohashes: Array.from({ length: MAX_INFOHASHES + 1 }, () => v1()) }))).toThrow(
      RangeError,
    );
    const h = v1();
    expect(
      refuseSharedHashes([{ download: dl({ infohashes: [h] }) }, { download: dl({ infohashes: [h] }) }]),
    ).toBeInstanceOf(RangeError);
    expect(refuseSharedHashes([{ download: dl() }, { download: dl() }])).toBeUndefined();
  });
});
