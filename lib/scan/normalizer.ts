import { ContractMessage, isScanErrorCode, ScanErrorCode } from './contract';
import type { Merged, MergedFile } from './merge';

/**
 * Normalizers turn the merged raw answer into the envelope's verdict. Per file: failed if it did not parse, or its `error.code` is a
 * non-empty string; `error.code == ""` is success, and a missing/null `error`
 * is not a failure. All files failed → `error` with the first failed file's
 * code (by name) and ITS message (the file is named in the warnings); each
 * failed file is a warning `<name>: <code>: <message>`. An empty or missing
 * message counts as absent and gets a default text, so no answer says
 * nothing about why it failed.
 */

export const NO_MESSAGE = 'the scanning system gave no message';

export interface Normalized {
  status: 'done' | 'needs_check' | 'error';
  documents: unknown[];
  error: { code: ScanErrorCode; message: string } | null;
  metrics: { warnings: string[] };
}

export interface Normalizer {
  normalize(merged: Merged): Normalized;
}

interface FileVerdict {
  file: MergedFile;
  failure?: { code: ScanErrorCode; message: string };
}

function judge(file: MergedFile): FileVerdict {
  if (file.parse_error !== null)
    return { file, failure: { code: 'INVALID_FORMAT', message: `not JSON: ${file.parse_error}` } };
  const error = (file.response as { error?: { code?: unknown; message?: unknown } | null } | null)?.error;
  const code = error?.code;
  if (typeof code !== 'string' || code === '') return { file };
  const message = typeof error?.message === 'string' && error.message.trim() !== '' ? error.message : NO_MESSAGE;
  // A code outside the contract is reported as UNKNOWN_ERROR, keeping the original in the message.
  return {
    file,
    failure: isScanErrorCode(code) ? { code, message } : { code: 'UNKNOWN_ERROR', message: `${code}: ${message}` },
  };
}

/** The rules every normalizer shares; `onSuccess` decides what succeeded files become. */
function normalizeWith(
  merged: Merged,
  onSuccess: (ok: MergedFile[]) => Omit<Normalized, 'metrics' | 'error'> & { error?: Normalized['error'] },
): Normalized {
  const verdicts = merged.files.map(judge);
  const warnings = verdicts.flatMap((v) =>
    v.failure ? [`${v.file.name}: ${v.failure.code}: ${v.failure.message}`] : [],
  );
  const ok = verdicts.filter((v) => !v.failure).map((v) => v.file);
  if (ok.length === 0) {
    const first = verdicts.find((v) => v.failure)!;
    return {
      status: 'error',
      documents: [],
      error: { code: first.failure!.code, message: first.failure!.message },
      metrics: { warnings },
    };
  }
  const result = onSuccess(ok);
  return { ...result, error: result.error ?? null, metrics: { warnings } };
}

/** The seed's slice-0 behaviour: failures are reported; any success is NOT_IMPLEMENTED. */
export class NullNormalizer implements Normalizer {
  normalize(merged: Merged): Normalized {
    return normalizeWith(merged, () => ({
      status: 'error',
      documents: [],
      error: { code: 'NOT_IMPLEMENTED', message: ContractMessage.NOT_IMPLEMENTED },
    }));
  }
}

interface DataOcr {
  form_name?: string;
  confidence?: number;
  fields?: Array<{ name: string; value: unknown; confidence?: number }>;
  table_structure?: unknown[];
}

/** Content AI answers → documents; `needs_check` when any confidence is below the threshold. */
export class ContentAiNormalizer implements Normalizer {
  constructor(private readonly threshold: number) {}

  normalize(merged: Merged): Normalized {
    return normalizeWith(merged, (ok) => {
      let doubtful = false;
      const documents = ok.map((file) => {
        const ocr = ((file.response as { data_ocr?: DataOcr } | null)?.data_ocr ?? {}) as DataOcr;
        const fields = ocr.fields ?? [];
        const confidence = typeof ocr.confidence === 'number' ? ocr.confidence : 0;
        if (
          confidence < this.threshold ||
          fields.some((f) => typeof f.confidence === 'number' && f.confidence < this.threshold)
        )
          doubtful = true;
        return {
          file: file.name,
          form: ocr.form_name || null,
          confidence,
          fields: Object.fromEntries(fields.map((f) => [f.name, f.value])),
          tables: ocr.table_structure ?? [],
        };
      });
      return { status: doubtful ? 'needs_check' : 'done', documents };
    });
  }
}

export function normalizerFor(kind: 'null' | 'content-ai', threshold: number): Normalizer {
  return kind === 'null' ? new NullNormalizer() : new ContentAiNormalizer(threshold);
}
