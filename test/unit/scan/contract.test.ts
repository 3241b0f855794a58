import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { envelope, natsMsgId, parseScanRequest, validateEnvelope } from '../../../lib/scan/contract';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/scan');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const request = JSON.parse(fixture('request.json'));

describe('the contract fixtures', () => {
  it('the example request is valid', () => {
    expect(parseScanRequest(fixture('request.json'))).toEqual({ ok: true, request });
  });

  it.each(['envelope-processing.json', 'envelope-done.json', 'envelope-error.json'])('%s is a valid envelope', (name) => {
    expect(validateEnvelope(JSON.parse(fixture(name)))).toBe(true);
  });
});

describe('parseScanRequest', () => {
  it.each([
    ['MAJOR 2', { schema_version: '2.0' }],
    ['a huge MAJOR', { schema_version: '1' + '0'.repeat(400) + '.0' }],
    ['no minor', { schema_version: '1' }],
    ['pipeline other than image', { pipeline: 'audio' }],
    ['attempt 0', { attempt: 0 }],
    ['attempt as a string', { attempt: '1' }],
    ['a deadline that is no date', { reply_deadline: 'tomorrow' }],
    ['an extra field in s3', { s3: { bucket: 'b-1', key: 'k', region: 'x' } }],
  ])('refuses %s, still naming the job for a SCHEMA_MISMATCH answer', (_what, override) => {
    const parsed = parseScanRequest(JSON.stringify({ ...request, ...override }));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.ids?.job_id).toBe(request.job_id);
  });

  it('accepts a later minor version with fields it does not know', () => {
    expect(parseScanRequest(JSON.stringify({ ...request, schema_version: '1.7', priority: 'high' })).ok).toBe(true);
  });

  it('has no ids to answer to when the job id is unreadable', () => {
    for (const data of ['not json', '[]', JSON.stringify({ ...request, job_id: 'x' })]) {
      const parsed = parseScanRequest(data);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.ids).toBeUndefined();
    }
  });

  it('never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify({ ...request, job_id: v }))), (data) => {
        expect(typeof parseScanRequest(data).ok).toBe('boolean');
      }),
      { numRuns: 3000 },
    );
  });
});

describe('envelope', () => {
  it('builds valid envelopes with bounded messages, and a stable Nats-Msg-Id', () => {
    const ids = { job_id: request.job_id, file_id: request.file_id, attempt: 2 };
    const e = envelope('error', ids, { name: 's', version: '1' }, { error: { code: 'TIMEOUT', message: 'x'.repeat(5000) }, warnings: ['w'.repeat(5000)] });
    expect(validateEnvelope(e)).toBe(true);
    expect(e.error!.message).toHaveLength(4000);
    expect(natsMsgId(e)).toBe(`${request.job_id}:2:error`);
    expect(validateEnvelope(envelope('processing', { job_id: request.job_id, file_id: null, attempt: null }, { name: 's', version: '1' }))).toBe(true);
  });
});
