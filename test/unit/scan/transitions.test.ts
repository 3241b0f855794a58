import type { Envelope, ScanRequest } from '../../../lib/scan/contract';
import {
  finished,
  holdsSlot,
  isInState,
  mayClaimPublish,
  newJob,
  polled,
  PUBLISH_LEASE_MS,
  startSubmitted,
  submitted,
} from '../../../lib/scan/model';

/**
 * A job's moves (lib/scan/model.ts), the ones the DynamoDB store writes as a
 * CAS and the tests' memory store applies: each returns the job as written.
 */
const request = { job_id: '3f2504e0-4f89-11d3-9a0c-0305e82c3301' } as ScanRequest;
const queued = newJob(request, 'h', 1000, false);

describe('scan job transitions', () => {
  it('a new job is starting with a slot, queued without', () => {
    expect(queued).toEqual({
      job_id: request.job_id,
      request,
      request_hash: 'h',
      state: 'queued',
      created_at: 1000,
      published: false,
      revision: 1,
    });
    expect(newJob(request, 'h', 1000, true)).toEqual({ ...queued, state: 'starting', started_at: 1000 });
  });

  it('queued → submitted in one move; any other state may not take a slot', () => {
    expect(startSubmitted(queued, 2000, 'in.pdf', 9000)).toEqual({
      ...queued,
      state: 'submitted',
      started_at: 2000,
      submitted_at: 2000,
      inbox_name: 'in.pdf',
      deadline: 9000,
      revision: 2,
    });
    for (const state of ['starting', 'submitted', 'finished'] as const)
      expect(startSubmitted({ ...queued, state }, 2000, 'in.pdf', 9000)).toBeUndefined();
  });

  it('starting → submitted, polls and finish bump the revision; finishing takes the publish lease', () => {
    const starting = newJob(request, 'h', 1000, true);
    const sub = submitted(starting, 'in.pdf', 1500, 8000);
    expect(sub).toMatchObject({ state: 'submitted', submitted_at: 1500, deadline: 8000, revision: 2 });
    expect(polled(sub, { poll_ok: true })).toMatchObject({ state: 'submitted', poll_ok: true, revision: 3 });
    const result = { status: 'done' } as Envelope;
    expect(finished(sub, result, 3000)).toMatchObject({
      state: 'finished',
      result,
      finished_at: 3000,
      published: false,
      publish_lease: 3000 + PUBLISH_LEASE_MS,
      revision: 3,
    });
  });

  it('slots, the state index and the publish claim', () => {
    expect(
      [queued, { ...queued, state: 'starting' as const }, { ...queued, state: 'submitted' as const }].map(holdsSlot),
    ).toEqual([false, true, true]);
    const done = finished(queued, { status: 'done' } as Envelope, 3000);
    expect(isInState(done, 'unpublished')).toBe(true);
    expect(isInState({ ...done, published: true }, 'unpublished')).toBe(false);
    expect(isInState(queued, 'queued')).toBe(true);
    expect(mayClaimPublish(done, done.publish_lease!)).toBe(false);
    expect(mayClaimPublish(done, done.publish_lease! + 1)).toBe(true);
    expect(mayClaimPublish({ ...done, publish_lease: undefined }, 0)).toBe(true);
    expect(mayClaimPublish({ ...done, published: true }, Infinity)).toBe(false);
  });
});
