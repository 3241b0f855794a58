import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { scanOnce } from '../../../emulator/scanner/scanner';
import { LocalHotFolder } from '../../../lib/scan/hotfolder';
import { DEFAULT_ANSWER_BOUNDS, mergeAnswers } from '../../../lib/scan/merge';
import { inboxName } from '../../../lib/names';
import { ContentAiNormalizer, NullNormalizer, Normalizer } from '../../../lib/scan/normalizer';

/** Hot folder → scanner emulator → answer set → merge → normalizer, with the real fixtures. */
const FIXTURES = path.resolve(__dirname, '../../../fixtures/ocr');
let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'scan-pipeline-'));
  fs.mkdirSync(path.join(root, 'Input'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** The emulator answers by name; `input` need not exist in fixtures/ocr/inputs when `bytes` are given. */
async function scan(input: string, normalizer: Normalizer = new ContentAiNormalizer(0.8), bytes?: Buffer) {
  const folder = new LocalHotFolder(root);
  const job = randomUUID();
  await folder.put(inboxName(job, input), bytes ?? fs.readFileSync(path.join(FIXTURES, 'inputs', input)));
  expect(await scanOnce({ root, fixturesDir: FIXTURES })).toEqual([job]);
  const merged = await mergeAnswers(job, (await folder.poll(job))!, DEFAULT_ANSWER_BOUNDS);
  return { job, merged, result: normalizer.normalize(merged) };
}

describe('scanner emulator + normalizers on the fixtures', () => {
  it('aep_3.pdf: the set is aep_3 + aep_3_ofr (never aep_30), done with a warning about the error file', async () => {
    const { job, merged, result } = await scan('aep_3.pdf');
    expect(merged.files.map((f) => f.name)).toEqual(['aep_3.json', 'aep_3_ofr.json']);
    expect(merged.files.every((f) => (f.response as { file_uid: string }).file_uid === job)).toBe(true);
    expect(result).toMatchObject({
      status: 'done',
      error: null,
      metrics: { warnings: ['aep_3_ofr.json: INVALID_DOCUMENT: page 2 is not part of the form'] },
    });
    expect(result.documents).toEqual([
      expect.objectContaining({
        file: 'aep_3.json',
        form: 'AEP-3',
        fields: { applicant: 'Jane Roe', date: '2026-11-30' },
      }),
    ]);
  });

  it('aep_6.pdf: done, no warnings', async () => {
    expect((await scan('aep_6.pdf')).result).toMatchObject({ status: 'done', metrics: { warnings: [] } });
  });

  it('aep_5.PDF: INVALID_DOCUMENT', async () => {
    const { result } = await scan('aep_5.PDF');
    expect(result).toMatchObject({ status: 'error', error: { code: 'INVALID_DOCUMENT' } });
  });

  it('an unknown file: one INVALID_DOCUMENT answer', async () => {
    const { merged, result } = await scan('unknown.pdf');
    expect(merged.files.map((f) => f.name)).toEqual(['unknown.json']);
    expect(result.error?.code).toBe('INVALID_DOCUMENT');
  });

  it('aep_8.pdf: picked by the _* rule, below the threshold → needs_check', async () => {
    const { merged, result } = await scan('aep_8.pdf');
    expect(merged.files.map((f) => f.name)).toEqual(['aep_8_form4.json']);
    expect(result.status).toBe('needs_check');
  });

  it('with the NullNormalizer: NOT_IMPLEMENTED where any file succeeded, the real code where none did', async () => {
    expect((await scan('aep_3.pdf', new NullNormalizer())).result).toMatchObject({
      status: 'error',
      error: { code: 'NOT_IMPLEMENTED' },
      metrics: { warnings: ['aep_3_ofr.json: INVALID_DOCUMENT: page 2 is not part of the form'] },
    });
    expect((await scan('aep_6.pdf', new NullNormalizer())).result.error?.code).toBe('NOT_IMPLEMENTED');
    expect((await scan('aep_5.PDF', new NullNormalizer())).result.error?.code).toBe('INVALID_DOCUMENT');
  });

  it('a broken fixture is answered INVALID_DOCUMENT naming it', async () => {
    const { result } = await scan('aep_9.pdf', undefined, Buffer.from('%PDF-1.4'));
    expect(result.error).toEqual({ code: 'INVALID_DOCUMENT', message: 'fixture aep_9.json is broken' }); // the file's own message; its name is in the warnings
    expect(result.metrics.warnings).toEqual(['aep_9.json: INVALID_DOCUMENT: fixture aep_9.json is broken']);
  });

  it('marks inputs .done, ignores dot-files and foreign names, answers each input once', async () => {
    const folder = new LocalHotFolder(root);
    const job = randomUUID();
    await folder.put(inboxName(job, 'aep_6.pdf'), Buffer.from('%PDF'));
    fs.writeFileSync(path.join(root, 'Input', '.DS_Store'), 'x');
    fs.writeFileSync(path.join(root, 'Input', 'not-a-job.pdf'), 'x');
    expect(await scanOnce({ root, fixturesDir: FIXTURES })).toEqual([job]);
    expect(await scanOnce({ root, fixturesDir: FIXTURES })).toEqual([]);
    expect(fs.readdirSync(path.join(root, 'Input')).sort()).toEqual([
      '.DS_Store',
      `${job}_aep_6.pdf.done`,
      'not-a-job.pdf',
    ]);
    expect(fs.readdirSync(path.join(root, 'Output'))).toEqual([job]); // no staging folder left behind
  });
});
