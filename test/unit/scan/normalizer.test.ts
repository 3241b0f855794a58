import { ContentAiNormalizer, NO_MESSAGE, NullNormalizer } from '../../../lib/scan/normalizer';
import type { MergedFile } from '../../../lib/scan/merge';

const file = (name: string, response: unknown, parse_error: string | null = null): MergedFile => ({
  name,
  response,
  parse_error,
});
const ok = (confidence = 0.9) => ({
  error: { code: '', message: '' },
  data_ocr: { form_name: 'F', confidence, fields: [] },
});
const merged = (...files: MergedFile[]) => ({ job_id: 'j', files });

describe('normalizer rules', () => {
  const n = new ContentAiNormalizer(0.8);

  it('a missing or null error is not a failure; "" is success', () => {
    expect(
      n.normalize(
        merged(
          file('a.json', { data_ocr: { confidence: 0.9 } }),
          file('b.json', { error: null, data_ocr: { confidence: 0.9 } }),
        ),
      ).status,
    ).toBe('done');
  });

  it('all files failed: the first failed file by name gives the code; parse errors are INVALID_FORMAT', () => {
    const r = n.normalize(
      merged(file('a.json', null, 'Unexpected end'), file('b.json', { error: { code: 'TIMEOUT', message: 'slow' } })),
    );
    expect(r).toMatchObject({ status: 'error', error: { code: 'INVALID_FORMAT' } });
    expect(r.metrics.warnings).toEqual(['a.json: INVALID_FORMAT: not JSON: Unexpected end', 'b.json: TIMEOUT: slow']);
  });

  it('a code outside the contract is UNKNOWN_ERROR keeping the original', () => {
    const r = n.normalize(merged(file('a.json', { error: { code: 'E_PAPER_JAM', message: 'tray 2' } })));
    expect(r.error).toEqual({ code: 'UNKNOWN_ERROR', message: 'E_PAPER_JAM: tray 2' });
  });

  it('needs_check below the threshold, done at or above it', () => {
    expect(n.normalize(merged(file('a.json', ok(0.79)))).status).toBe('needs_check');
    expect(n.normalize(merged(file('a.json', ok(0.8)))).status).toBe('done');
  });

  it('NullNormalizer: NOT_IMPLEMENTED as soon as one file succeeded', () => {
    expect(
      new NullNormalizer().normalize(
        merged(file('a.json', ok()), file('b.json', { error: { code: 'TIMEOUT', message: '' } })),
      ),
    ).toMatchObject({
      status: 'error',
      error: { code: 'NOT_IMPLEMENTED' },
      metrics: { warnings: [`b.json: TIMEOUT: ${NO_MESSAGE}`] },
    });
  });

  it("all failed: error.message is that file's own message; the file name is in the warnings", () => {
    const r = n.normalize(
      merged(
        file('b.json', { error: { code: 'INVALID_DOCUMENT', message: 'blank page' } }),
        file('c.json', { error: { code: 'TIMEOUT', message: 'slow' } }),
      ),
    );
    expect(r.error).toEqual({ code: 'INVALID_DOCUMENT', message: 'blank page' });
    expect(r.metrics.warnings).toEqual(['b.json: INVALID_DOCUMENT: blank page', 'c.json: TIMEOUT: slow']);
  });

  it.each([[''], ['   '], [undefined], [null], [42]])(
    'an empty or absent message (%p) gets the default text',
    (message) => {
      const r = n.normalize(merged(file('a.json', { error: { code: 'INVALID_DOCUMENT', message } })));
      expect(r.error).toEqual({ code: 'INVALID_DOCUMENT', message: NO_MESSAGE });
      expect(r.metrics.warnings).toEqual([`a.json: INVALID_DOCUMENT: ${NO_MESSAGE}`]);
    },
  );
});
