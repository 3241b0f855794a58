import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import envelopeSchema from './schemas/envelope.schema.json';
import requestSchema from './schemas/request.schema.json';

/**
 * The scan contract (DESIGN §4): the request the core system publishes and
 * the envelopes the gateway answers with, as JSON Schemas in ./schemas (the
 * artefact both sides share) and their TypeScript shapes here.
 */

export const SCHEMA_VERSION = '1.0';

/** The one enum of error codes of this contract. */
export const ScanErrorCode = {
  SCHEMA_MISMATCH: 'SCHEMA_MISMATCH',
  FILE_READ_ERROR: 'FILE_READ_ERROR',
  RECOGNITION_FAILED: 'RECOGNITION_FAILED',
  INVALID_FORMAT: 'INVALID_FORMAT',
  INVALID_DOCUMENT: 'INVALID_DOCUMENT',
  TIMEOUT: 'TIMEOUT',
  NOT_IMPLEMENTED: 'NOT_IMPLEMENTED',
  UNKNOWN_ERROR: 'UNKNOWN_ERROR',
} as const;
export type ScanErrorCode = (typeof ScanErrorCode)[keyof typeof ScanErrorCode];

export function isScanErrorCode(code: unknown): code is ScanErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ScanErrorCode, code);
}

export interface ScanRequest {
  schema_version: string;
  job_id: string;
  file_id: string;
  attempt: number;
  pipeline: 'image';
  s3: { bucket: string; key: string };
  original_name: string;
  reply_deadline: string;
}

export type EnvelopeStatus = 'processing' | 'done' | 'needs_check' | 'error';

export interface Envelope {
  schema_version: string;
  job_id: string;
  file_id: string | null;
  attempt: number | null;
  status: EnvelopeStatus;
  service: { name: string; version: string };
  error: { code: ScanErrorCode; message: string } | null;
  raw_s3_key: string | null;
  metrics: { warnings: string[] };
  documents?: unknown[];
}

const ajv = new Ajv({ allErrors: false, strict: true });
addFormats(ajv, ['uuid', 'date-time']);
const validateRequest = ajv.compile<ScanRequest>(requestSchema);
export const validateEnvelope = ajv.compile<Envelope>(envelopeSchema);

export const MAX_MESSAGE_LENGTH = 4000;

export type ParsedRequest =
  | { ok: true; request: ScanRequest }
  /** Invalid; `ids` when the job and file ids could still be read, so the sender hears why. */
  | { ok: false; reason: string; ids?: { job_id: string; file_id: string | null; attempt: number | null } };

export function parseScanRequest(data: string): ParsedRequest {
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (validateRequest(body)) return { ok: true, request: body };
  const error = validateRequest.errors?.[0];
  const reason = `${error?.instancePath || 'request'} ${error?.message ?? 'is invalid'}`.trim();
  return { ok: false, reason, ids: extractIds(body) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function extractIds(body: unknown): { job_id: string; file_id: string | null; attempt: number | null } | undefined {
  const b = body as Record<string, unknown> | null;
  if (!b || typeof b !== 'object' || typeof b.job_id !== 'string' || !UUID.test(b.job_id)) return undefined;
  return {
    job_id: b.job_id.toLowerCase(),
    file_id: typeof b.file_id === 'string' && UUID.test(b.file_id) ? b.file_id.toLowerCase() : null,
    attempt: Number.isSafeInteger(b.attempt) && (b.attempt as number) >= 1 ? (b.attempt as number) : null,
  };
}

export interface EnvelopeParts {
  error?: { code: ScanErrorCode; message: string } | null;
  raw_s3_key?: string | null;
  warnings?: string[];
  documents?: unknown[];
}

export function envelope(
  status: EnvelopeStatus,
  ids: { job_id: string; file_id: string | null; attempt: number | null },
  service: { name: string; version: string },
  parts: EnvelopeParts = {},
): Envelope {
  return {
    schema_version: SCHEMA_VERSION,
    job_id: ids.job_id,
    file_id: ids.file_id,
    attempt: ids.attempt,
    status,
    service,
    error: parts.error ? { code: parts.error.code, message: parts.error.message.slice(0, MAX_MESSAGE_LENGTH) } : null,
    raw_s3_key: parts.raw_s3_key ?? null,
    metrics: { warnings: (parts.warnings ?? []).map((w) => w.slice(0, MAX_MESSAGE_LENGTH)) },
    ...(parts.documents ? { documents: parts.documents } : {}),
  };
}

/** Header `Nats-Msg-Id`: lets a deduplicating consumer drop a re-published envelope. */
export function natsMsgId(e: Pick<Envelope, 'job_id' | 'attempt' | 'status'>): string {
  return `${e.job_id}:${e.attempt ?? 0}:${e.status}`;
}
