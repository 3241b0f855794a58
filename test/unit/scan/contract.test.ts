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

  it.each(['envelope-processing.json', 'envelope-done.json', 'envelope-error.json'])(
    '%s is a valid envelope',
    (name) => {
      expect(validateEnvelope(JSON.parse(fixture(name)))).toBe(true);
    },
  );
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
    ['MAJOR 2 with only known fields', { schema_version: '2.0', s3: { bucket: 'b-1', key: 'k' } }],
  ])('refuses %s, still naming the job for a SCHEMA_MISMATCH answer', (_what, override) => {
    const parsed = parseScanRequest(JSON.stringify({ ...request, ...override }));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.ids?.job_id).toBe(request.job_id);
  });

  it('accepts a later minor version with fields it does not know, in every object, and drops them', () => {
    const later = {
      ...request,
      schema_version: '1.7',
      priority: 'high',
      trace: { id: 'abc', spans: [1, 2] },
      s3: { ...request.s3, version_id: '3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY', region: 'eu-central-1' },
    };
    const parsed = parseScanRequest(JSON.stringify(later));
    expect(parsed).toEqual({ ok: true, request: { ...request, schema_version: '1.7' } });
  });

  it('still refuses a later MAJOR even when every field is known', () => {
    const parsed = parseScanRequest(JSON.stringify({ ...request, schema_version: '2.0' }));
    expect(parsed).toMatchObject({ ok: false, reason: expect.stringContaining('schema_version') });
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
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify({ ...request, job_id: v })),
        ),
        (data) => {
          expect(typeof parseScanRequest(data).ok).toBe('boolean');
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('envelope', () => {
  it('builds valid envelopes with bounded messages, and a stable Nats-Msg-Id', () => {
    const ids = { job_id: request.job_id, file_id: request.file_id, attempt: 2 };
    const e = envelope(
      'error',
      ids,
      { name: 's', version: '1' },
      { error: { code: 'TIMEOUT', message: 'x'.repeat(5000) }, warnings: ['w'.repeat(5000)] },
    );
    expect(validateEnvelope(e)).toBe(true);
    expect(e.error!.message).toHaveLength(4000);
    expect(natsMsgId(e)).toBe(`${request.job_id}:2:error`);
    expect(validateEnvelope({ ...e, attempt: null })).toBe(false); // never null
  });

  it('caps error.message at 4000 without splitting a surrogate pair, and replaces lone surrogates', () => {
    const ids = { job_id: request.job_id, file_id: request.file_id, attempt: 1 };
    const pairAtCut = 'x'.repeat(3999) + '😀' + 'tail';
    const capped = envelope(
      'error',
      ids,
      { name: 's', version: '1' },
      { error: { code: 'UNKNOWN_ERROR', message: pairAtCut } },
    ).error!.message;
    expect(capped).toBe('x'.repeat(3999));
    const lone = envelope(
      'error',
      ids,
      { name: 's', version: '1' },
      { error: { code: 'UNKNOWN_ERROR', message: 'a\ud800b\udc00c' } },
    ).error!.message;
    expect(lone).toBe('a\ufffdb\ufffdc');
    expect(Buffer.from(lone, 'utf8').toString('utf8')).toBe(lone);
  });
});

describe('SCHEMA_MISMATCH ids (an answer only when job_id AND file_id are readable; attempt never null)', () => {
  const refused = (over: Record<string, unknown>) => {
    const parsed = parseScanRequest(JSON.stringify({ ...request, schema_version: '9.0', ...over }));
    if (parsed.ok) throw new Error('expected a refusal');
    return parsed.ids;
  };
  it('no file id → no answer', () => {
    expect(refused({ file_id: undefined })).toBeUndefined();
    expect(refused({ file_id: 'nope' })).toBeUndefined();
  });
  it.each([[0], [-1], [1.5], ['2'], [null], [undefined]])('attempt %p → 1', (attempt) => {
    expect(refused({ attempt })).toEqual({ job_id: request.job_id, file_id: request.file_id, attempt: 1 });
  });
  it('a valid attempt is kept', () => {
    expect(refused({ attempt: 3 })?.attempt).toBe(3);
  });
});

describe('job_id and file_id at the boundary: canonical, lower-cased', () => {
  it('an upper-case spelling is the same job, lower-cased', () => {
    const parsed = parseScanRequest(
      JSON.stringify({ ...request, job_id: request.job_id.toUpperCase(), file_id: request.file_id.toUpperCase() }),
    );
    expect(parsed).toMatchObject({
      ok: true,
      request: { job_id: request.job_id.toLowerCase(), file_id: request.file_id.toLowerCase() },
    });
  });
  it.each([
    `urn:uuid:${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`,
    `{${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}}`,
    '00000000000040008000000000000000',
  ])('refuses %s with SCHEMA_MISMATCH', (jobId) => {
    const parsed = parseScanRequest(JSON.stringify({ ...request, job_id: jobId }));
    expect(parsed.ok).toBe(false);
  });
  it('an urn:uuid: job id is refused but still answered, under the canonical id', () => {
    const parsed = parseScanRequest(JSON.stringify({ ...request, job_id: `urn:uuid:${request.job_id.toUpperCase()}` }));
    expect(parsed).toMatchObject({ ok: false, ids: { job_id: request.job_id.toLowerCase() } });
  });
  it('keeps ONLY the contract fields: extras never reach the store', () => {
    const hostile = `{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},"big":1e400,"deep":${'['.repeat(60)}${']'.repeat(60)},${JSON.stringify(request).slice(1)}`;
    const parsed = parseScanRequest(hostile);
    expect(parsed.ok).toBe(true);
    if (parsed.ok)
      expect(Object.keys(parsed.request).sort()).toEqual([
        'attempt',
        'file_id',
        'job_id',
        'original_name',
        'pipeline',
        'reply_deadline',
        's3',
        'schema_version',
      ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
