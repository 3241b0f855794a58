import fs from 'node:fs';
import path from 'node:path';
import {
  checkEnvelopeParts,
  ContractMessage,
  envelope,
  EnvelopeInvariantError,
  EnvelopeParts,
  EnvelopeStatus,
  validateEnvelope,
} from '../../../lib/scan/contract';
import { NullNormalizer } from '../../../lib/scan/normalizer';

/**
 * The contract's rules between status, error and documents (issue 41):
 * `error` forbids documents, `done`/`needs_check` need a non-empty list. They
 * are enforced by the one envelope builder AND stated by the schema, so a
 * normaliser (or a hand-written envelope) cannot break them by accident.
 */
const ids = {
  job_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  file_id: '9c5b94b1-35ad-49bb-b118-8e8fc24abf80',
  attempt: 1,
};
const service = { name: 's', version: '1' };
const doc = { file: 'a.json', form: null };
const err = { code: 'TIMEOUT' as const, message: 'x' };
const done = JSON.parse(
  fs.readFileSync(path.resolve(__dirname, '../../../fixtures/scan/envelope-done.json'), 'utf8'),
) as Record<string, unknown>;

const hostile: Array<[string, EnvelopeStatus, EnvelopeParts]> = [
  ['error with documents', 'error', { error: err, documents: [doc] }],
  ['error without an error', 'error', {}],
  ['done without documents', 'done', {}],
  ['done with an empty list', 'done', { documents: [] }],
  ['needs_check with an empty list', 'needs_check', { documents: [] }],
  ['done with an error', 'done', { error: err, documents: [doc] }],
  ['needs_check with an error', 'needs_check', { error: err, documents: [doc] }],
  ['processing with documents', 'processing', { documents: [doc] }],
  ['processing with an empty list', 'processing', { documents: [] }],
  ['processing with an error', 'processing', { error: err }],
  ['documents that are not a list', 'done', { documents: { 0: doc } as unknown as unknown[] }],
  ['a status outside the contract', 'finished' as EnvelopeStatus, { documents: [doc] }],
];

describe('the envelope builder enforces the contract rules', () => {
  it.each(hostile)('refuses %s', (_name, status, parts) => {
    expect(() => envelope(status, ids, service, parts)).toThrow(EnvelopeInvariantError);
  });

  it('drops the empty list a normaliser gives with an error: the envelope carries no documents', () => {
    const e = envelope('error', ids, service, { error: err, documents: [] });
    expect('documents' in e).toBe(false);
    expect(validateEnvelope(e)).toBe(true);
  });

  it('builds every legal shape, each valid against the schema', () => {
    for (const e of [
      envelope('processing', ids, service),
      envelope('done', ids, service, { documents: [doc] }),
      envelope('needs_check', ids, service, { documents: [doc, doc] }),
      envelope('error', ids, service, { error: err }),
    ])
      expect(validateEnvelope(e)).toBe(true);
  });

  it('the NullNormalizer slice-0 answer passes the rules, with the contract message', () => {
    const n = new NullNormalizer().normalize({
      job_id: ids.job_id,
      files: [{ name: 'a.json', response: { error: { code: '' } }, parse_error: null }],
    });
    const parts = checkEnvelopeParts(n.status, { error: n.error, documents: n.documents });
    expect(parts.documents).toBeUndefined();
    expect(n.error).toEqual({ code: 'NOT_IMPLEMENTED', message: ContractMessage.NOT_IMPLEMENTED });
  });
});

describe('the schema states the same rules', () => {
  it.each([
    ['error with documents', { ...done, status: 'error', error: err }],
    ['error with an empty list', { ...done, status: 'error', error: err, documents: [] }],
    ['error with a null error', { ...done, status: 'error', error: null, documents: undefined }],
    ['done with an empty list', { ...done, documents: [] }],
    ['done without documents', { ...done, documents: undefined }],
    ['needs_check with an error', { ...done, status: 'needs_check', error: err }],
    ['processing with documents', { ...done, status: 'processing' }],
  ])('refuses %s', (_name, value) => {
    expect(validateEnvelope(JSON.parse(JSON.stringify(value)))).toBe(false);
  });

  it('the done fixture carries a non-empty list', () => {
    expect(validateEnvelope(done)).toBe(true);
  });
});

describe('the contract messages are the Russian texts it names', () => {
  it('are exact', () => {
    expect(ContractMessage).toEqual({
      HOT_FOLDER_UNAVAILABLE: 'горячая папка недоступна',
      INVALID_FILE_NAME: 'недопустимое имя файла',
      NOT_IMPLEMENTED: 'нормализация ответа ИС Сканирование реализуется в Срезе 3',
    });
  });
});
