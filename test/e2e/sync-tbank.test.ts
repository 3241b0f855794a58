import { newId } from '../../lib/ident';
import { call } from '../support/http';
import { invokeScheduled } from '../support/stack';

/**
 * Rate limits with real processes: the tick and the steps in serverless
 * offline, the T-Bank emulator as its own process. The stack's rate-limit
 * "minute" is 2 s (TBANK_RATE_WINDOW_MS, emulator and client alike) and its
 * history 10 years, so one user's operations section needs more than 200
 * OperationsService calls (the limit) per window: it must pace, not fail.
 */
const tbank = process.env.TBANK_API_URL!;
afterAll(async () => {
  await fetch(`${tbank}/emulator/faults`, { method: 'DELETE' });
});

const tick = async () => expect((await invokeScheduled('syncTick')).FunctionError).toBeUndefined();

async function syncedUser(): Promise<{
  state: string;
  meta: {
    error_code: string | null;
    sections: Record<string, { state: string; error_code?: string }>;
    attempt_id: string;
  };
}> {
  const user = newId();
  expect((await call('POST', '/sync/connections', { user_id: user, token: `t.${user}` })).status).toBe(201);
  await tick();
  for (let i = 0; i < 400; i++) {
    const hourly = await call('GET', `/sync/${user}/hourly`);
    if (hourly.body?.state && hourly.body.state !== 'running') return hourly.body;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the attempt never settled');
}

const emulatorCalls = async () =>
  (await (await fetch(`${tbank}/emulator/calls`)).json()) as { calls: Record<string, number>; rate_limited: number };
const operationsCalls = (c: Record<string, number>) =>
  Object.entries(c)
    .filter(([k]) => k.startsWith('OperationsService/'))
    .reduce((n, [, v]) => n + v, 0);

it('a user whose sync needs more than 200 Operations calls per window completes by pacing, with 0 rate-limit failures', async () => {
  const before = await emulatorCalls();
  const began = performance.now();
  const hourly = await syncedUser();
  const after = await emulatorCalls();
  const seconds = (performance.now() - began) / 1000;
  expect(hourly).toMatchObject({ state: 'succeeded', meta: { error_code: null } });
  expect(operationsCalls(after.calls) - operationsCalls(before.calls)).toBeGreaterThan(200);
  expect(after.rate_limited - before.rate_limited).toBe(0);
  // More than the limit per window means at least one window boundary was waited for.
  expect(seconds).toBeGreaterThan(2);
}, 120_000);

it('a 429 storm ends the section failed with RATE_LIMITED only after its bound; the rest succeeds', async () => {
  await fetch(`${tbank}/emulator/faults`, {
    method: 'PUT',
    body: JSON.stringify({ 'OperationsService/GetOperationsByCursor': { storm: true } }),
  });
  const before = await emulatorCalls();
  const hourly = await syncedUser();
  await fetch(`${tbank}/emulator/faults`, { method: 'DELETE' });
  expect(hourly).toMatchObject({ state: 'partial', meta: { error_code: 'RATE_LIMITED' } });
  expect(hourly.meta.sections.operations).toMatchObject({ state: 'failed', error_code: 'RATE_LIMITED' });
  expect(hourly.meta.sections.portfolio).toMatchObject({ state: 'succeeded' });
  // Its bound: it waited for the reset and retried several times before giving up.
  expect((await emulatorCalls()).rate_limited - before.rate_limited).toBeGreaterThan(2);
  const attempt = await call('GET', `/sync/attempts/${hourly.meta.attempt_id}`);
  const operations = attempt.body.sections.find((s: { section: string }) => s.section === 'operations');
  expect(operations.step).toMatchObject({
    state: 'failed',
    error_code: 'RATE_LIMITED',
    tracking_id: expect.stringMatching(/^[0-9a-f]{32}$/),
  });
}, 120_000);
