import fs from 'node:fs';
import path from 'node:path';
import { RECENT_ATTRIBUTES, toItem } from '../../../lib/scan/keys';
import type { ScanJob } from '../../../lib/scan/model';

/**
 * The RECENT index projects exactly what the console reads: the list in
 * keys.ts and serverless.yml agree, and every attribute a finished job's item
 * carries for it is in the list (the documents never are).
 */
it('serverless.yml projects RECENT_ATTRIBUTES into RECENT, and nothing else', () => {
  const yml = fs.readFileSync(path.resolve(__dirname, '../../../serverless.yml'), 'utf8');
  const block = yml.slice(yml.indexOf('IndexName: RECENT'));
  const list = /NonKeyAttributes:\s*\[([^\]]*)\]/.exec(block)![1];
  expect(
    list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ).toEqual([...RECENT_ATTRIBUTES]);
});

it('a finished job item carries its outcome at the top level for the index; its documents are not projected', () => {
  const item = toItem({
    job_id: 'j',
    request: { file_id: 'f', attempt: 1 },
    state: 'finished',
    created_at: 1,
    published: true,
    revision: 2,
    result: { status: 'error', error: { code: 'TIMEOUT', message: 'm' }, documents: [{}] },
  } as unknown as ScanJob);
  expect(item).toMatchObject({ status: 'error', error_code: 'TIMEOUT', GSI2PK: 'DAY#1970-01-01' });
  const projected = new Set<string>(RECENT_ATTRIBUTES);
  expect(projected.has('status') && projected.has('error_code')).toBe(true);
  expect(projected.has('result')).toBe(false);
});
