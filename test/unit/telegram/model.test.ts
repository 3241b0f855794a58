import { marshall } from '@aws-sdk/util-dynamodb';
import { newId } from '../../../lib/ident';
import { MalformedStreamRecordError } from '../../../lib/telegram/errors';
import { classify, StreamRecord } from '../../../lib/telegram/model';

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
