import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { ConnectionService } from '../../../lib/sync/connections';
import { StaleAttemptError } from '../../../lib/sync/errors';
import { HOUR_MS, type Section } from '../../../lib/sync/model';
import { newStepId } from '../../../lib/sync/outcome';
import { HourlyService } from '../../../lib/sync/service';
import { tickUser } from '../../../lib/sync/tick';
import { attemptView } from '../../../lib/sync/views';
import { MemorySyncStore } from './memory-sync-store';

/**
 * A section continuing across steps of its attempt (decision 326), over the in-memory store: the
 * handover moves the attempt's child and the row in one fenced write; the attempt waits for the
 * continuation; the continuation takes the row once; nothing continues past the attempt's hour.
 */
const WAIT = 15 * 60_000;
const STEP_BOUND = 25_000;
const T0 = Date.UTC(2026, 11, 3, 9, 0, 0);
const keyring = new SecretSealer(parseKeyring(newKeyringEntry('unit')).keyring!);

async function walked() {
  const store = new MemorySyncStore();
  const hourly = new HourlyService({ store, waitBoundMs: WAIT });
  const connections = new ConnectionService({ store, sealer: async () => keyring });
  let clock = T0;
  const user = newId(T0);
  await connections.putConnection(user, 'tok', T0);
  const deps = {
    hourly,
    connections,
    dispatch: async () => {},
    now: () => clock,
    log: silentLogger,
    run: { run_id: newId(), run_deadline: T0 + 55_000 },
  };
  expect(await tickUser(deps, user)).toBe('first');
  const head = (await hourly.head(user))!;
  const row = (section: Section, step_id = head.children[section]!) => ({
    attempt_id: head.attempt_id,
    section,
    step_id,
  });
  for (const section of ['portfolio', 'operations', 'events.refresh'] as const)
    await hourly.startStep(user, { ...row(section), state: 'running', started_at: T0 });
  return { store, hourly, user, head, row, at: (ms: number) => (clock = ms) };
}

it('a handed-over section keeps the attempt running until its continuation finishes; the attempt then succeeds', async () => {
  const { hourly, user, head, row } = await walked();
  await hourly.finishStep(user, row('portfolio'), 'succeeded', T0 + 1000);
  await hourly.finishStep(user, row('events.refresh'), 'succeeded', T0 + 1000);
  const next = newStepId(T0 + 20_000);
  expect(
    await hourly.continueStep(
      user,
      row('operations'),
      { step_id: next, resume: { a1: '2019-04' } },
      T0 + 20_000,
      STEP_BOUND,
    ),
  ).toBe(true);
  expect((await hourly.head(user))!.children.operations).toBe(next);
  const [ops] = (await hourly.stepRows(head.attempt_id)).filter((r) => r.section === 'operations');
  expect(ops).toMatchObject({
    step_id: next,
    state: 'running',
    awaiting_start: true,
    continuations: 1,
    resume: { a1: '2019-04' },
  });

  const view = attemptView((await hourly.attempt(head.attempt_id))!);
  expect(view.sections.find((s) => s.section === 'operations')).toMatchObject({
    step_id: next,
    step: { state: 'running', continuations: 1 },
  });

  // Long after the first step's bound, and with every other section done, the attempt still waits.
  expect(await hourly.settleHourly(user, head.attempt_id, T0 + 60_000)).toEqual({ skipped: 'waiting' });
  // The continuation's first delivery takes the row; a re-delivery is a duplicate.
  const start = { ...row('operations', next), state: 'running' as const, started_at: T0 + 20_500 };
  expect(await hourly.startStep(user, start)).toBe('continued');
  expect(await hourly.startStep(user, start)).toBe('exists');
  await hourly.finishStep(user, row('operations', next), 'succeeded', T0 + 40_000);
  const catalog: string[] = [];
  await hourly.dispatchReady(user, head.attempt_id, T0 + 40_000, async (_s, id) => void catalog.push(id));
  expect(catalog).toHaveLength(1);
  await hourly.startStep(user, { ...row('catalog.enrichment', catalog[0]), state: 'running', started_at: T0 + 41_000 });
  await hourly.finishStep(user, row('catalog.enrichment', catalog[0]), 'succeeded', T0 + 42_000);
  expect(await hourly.settleHourly(user, head.attempt_id, T0 + 42_000)).toMatchObject({
    settled: { state: 'succeeded', error_code: undefined },
  });
});

it('no continuation whose own bound would end past the attempt’s hour (each step has its own wait bound)', async () => {
  const { hourly, user, head, row } = await walked();
  // Past the attempt's start + the wait bound a continuation is still taken: the bound is each step's (decision 364).
  const pastWait = T0 + WAIT + 1000;
  expect(
    await hourly.continueStep(
      user,
      row('operations'),
      { step_id: newStepId(pastWait), resume: {} },
      pastWait,
      STEP_BOUND,
    ),
  ).toBe(true);
  const { head: moved } = { head: (await hourly.head(user))! };
  const rowNow = { ...row('operations'), step_id: moved.children.operations! };
  const late = T0 + HOUR_MS - STEP_BOUND;
  expect(await hourly.continueStep(user, rowNow, { step_id: newStepId(late), resume: {} }, late, STEP_BOUND)).toBe(
    false,
  );
  expect((await hourly.head(user))!.children.operations).toBe(moved.children.operations);
  expect(moved.children.operations).not.toBe(head.children.operations);
  const early = late - 1;
  expect(await hourly.continueStep(user, rowNow, { step_id: newStepId(early), resume: {} }, early, STEP_BOUND)).toBe(
    true,
  );
});

it('fenced: a step that no longer owns the section, or an attempt that is not the current one, cannot hand over', async () => {
  const { hourly, user, row } = await walked();
  const next = newStepId(T0 + 1000);
  await hourly.continueStep(user, row('operations'), { step_id: next, resume: {} }, T0 + 1000, STEP_BOUND);
  // The old step (a re-delivery of it, or its late twin) hands over again: refused, the continuation kept.
  await expect(
    hourly.continueStep(user, row('operations'), { step_id: newStepId(T0 + 2000), resume: {} }, T0 + 2000, STEP_BOUND),
  ).rejects.toBeInstanceOf(StaleAttemptError);
  expect((await hourly.head(user))!.children.operations).toBe(next);
  // A step of another attempt.
  await expect(
    hourly.continueStep(
      user,
      { ...row('portfolio'), attempt_id: newId(T0) },
      { step_id: newStepId(T0 + 3000), resume: {} },
      T0 + 3000,
      STEP_BOUND,
    ),
  ).rejects.toBeInstanceOf(StaleAttemptError);
});
