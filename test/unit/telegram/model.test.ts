import { marshall } from '@aws-sdk/util-dynamodb';
import { newId } from '../../../lib/ident';
import { MalformedStreamRecordError } from '../../../lib/telegram/errors';
import { classify, statusChange, StreamRecord } from '../../../lib/telegram/model';

const id = newId();
const item = (fields: Record<string, unknown>) =>
  marshall(
    {
      PK: `DL#${id}`,
      SK: 'META',
      entity: 'download',
      id,
      name: 'Sintel',
      state: 'queued',
      infohashes: [{ infohash: 'ab'.repeat(20), kind: 'v1' }],
      ...fields,
    },
    { removeUndefinedValues: true },
  );
const record = (
  eventName: string,
  next: Record<string, unknown> | undefined,
  old?: Record<string, unknown>,
): StreamRecord => ({
  eventID: 'e-1',
  eventName,
  dynamodb: { SequenceNumber: '100', NewImage: next && item(next), OldImage: old && item(old) },
});

describe('classify', () => {
  it.each([
    ['INSERT', {}, undefined, 'created'],
    ['INSERT', { source_added_at: '2026-01-01T00:00:00Z', state: 'downloading' }, undefined, 'adopted'],
    ['MODIFY', { state: 'completed' }, { state: 'downloading' }, 'completed'],
    ['MODIFY', { state: 'failed' }, { state: 'downloading' }, 'failed'],
    ['MODIFY', { state: 'stuck' }, { state: 'queued' }, 'stuck'],
    ['MODIFY', { state: 'downloading' }, { state: 'completed' }, 'resurrected'],
    ['MODIFY', { state: 'downloading', review_reason: 'missing_in_client' }, { state: 'downloading' }, 'needs_review'],
    ['MODIFY', { state: 'downloading' }, { state: 'queued' }, undefined],
    ['MODIFY', { state: 'downloading', warning: 'stalled' }, { state: 'downloading' }, 'warned'],
    ['MODIFY', { state: 'downloading', warning: 'stalled' }, { state: 'downloading', warning: 'stalled' }, undefined],
    ['MODIFY', { state: 'downloading', warning: '__proto__' }, { state: 'downloading' }, undefined],
    ['MODIFY', { state: 'downloading' }, { state: 'downloading', warning: 'no_metadata' }, undefined],
    [
      'MODIFY',
      { state: 'downloading', review_reason: 'missing_in_client' },
      { state: 'queued', review_reason: 'missing_in_client' },
      undefined,
    ],
  ])('%s %j after %j is %s', (eventName, next, old, kind) => {
    expect(classify(record(eventName, next, old))?.kind).toBe(kind);
  });

  it('ignores removals, guards and memberships', () => {
    expect(classify(record('REMOVE', undefined, {}))).toBeUndefined();
    expect(
      classify({
        eventID: 'e',
        eventName: 'INSERT',
        dynamodb: { SequenceNumber: '1', NewImage: marshall({ PK: 'IH#ab', SK: 'ACTIVE', entity: 'guard' }) },
      }),
    ).toBeUndefined();
  });

  it('refuses an unreadable download record by name', () => {
    expect(() => classify({ ...record('INSERT', {}), eventID: 'EV#../x' })).toThrow(MalformedStreamRecordError);
    expect(() => classify(record('INSERT', { id: '123' }))).toThrow(MalformedStreamRecordError);
    expect(() => classify(record('INSERT', { state: 'exploded' }))).toThrow(MalformedStreamRecordError);
  });
});

describe('when the change was written (the notifier lag counts from it)', () => {
  const at = (next: Record<string, unknown>, approximateS?: number) =>
    classify({
      ...record('INSERT', next),
      dynamodb: { ...record('INSERT', next).dynamodb, ApproximateCreationDateTime: approximateS },
    })?.createdAt;

  it('is the later of the item’s updated_at and the record’s creation (whole seconds)', () => {
    const updated = Date.UTC(2026, 11, 6, 3, 0, 41, 250);
    expect(at({ updated_at: new Date(updated).toISOString() }, Math.floor(updated / 1000))).toBe(updated);
    // A record rounded far down (DynamoDB Local: to the minute) does not make a message look late.
    expect(at({ updated_at: new Date(updated).toISOString() }, Math.floor(updated / 60_000) * 60)).toBe(updated);
    // A write that left updated_at alone: the record's own time.
    expect(at({ updated_at: '2026-12-06T02:00:00.000Z' }, Math.floor(updated / 1000))).toBe(
      Math.floor(updated / 1000) * 1000,
    );
    expect(at({}, undefined)).toBeUndefined();
    expect(at({ updated_at: 'yesterday' }, undefined)).toBeUndefined();
  });
});

describe('statusChange (decision 456)', () => {
  it('a change of what the status message shows; nothing for an insert or a change it does not show', () => {
    const moved = statusChange(record('MODIFY', { progress: 0.5, size_bytes: 10 }, { progress: 0.4, size_bytes: 10 }));
    expect(moved).toMatchObject({ sequence: '100', download: { progress: 0.5, transfer: { size_bytes: 10 } } });
    expect(statusChange(record('MODIFY', { dl_speed: 5 }, {}))?.download.transfer).toEqual({ dl_speed: 5 });
    expect(statusChange(record('INSERT', {}))).toBeUndefined();
    expect(statusChange(record('MODIFY', { revision: 3, cancelled_at: 'x' }, { revision: 2 }))).toBeUndefined();
  });

  it('hostile figures in the image are left out, never shown', () => {
    const change = statusChange(
      record('MODIFY', { progress: 7, dl_speed: -1, up_speed: 'fast', seeds: 3 }, { seeds: 2 }),
    );
    expect(change?.download.progress).toBeUndefined();
    expect(change?.download.transfer).toEqual({ seeds: 3 });
  });
});
