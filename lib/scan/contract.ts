import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import envelopeSchema from './schemas/envelope.schema.json';
import requestSchema from './schemas/request.schema.json';

/**
 * The scan contract: the request the core system publishes and
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

/**
 * The texts the contract names for its errors, in Russian: the core system
 * shows them to its operators as they are (decision 294).
 */
export const ContractMessage = {
  /** RECOGNITION_FAILED: the hot folder could not be written or never answered a poll. */
  HOT_FOLDER_UNAVAILABLE: 'горячая папка недоступна',
  /** RECOGNITION_FAILED: the file's name cannot be put into the hot folder. */
  INVALID_FILE_NAME: 'недопустимое имя файла',
  /** NOT_IMPLEMENTED: a file was recognised, and the contract's slice 0 does not normalise it. */
  NOT_IMPLEMENTED: 'нормализация ответа ИС Сканирование реализуется в Срезе 3',
} as const;

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
  file_id: string;
  attempt: number;
  status: EnvelopeStatus;
  service: { name: string; version: string };
  error: { code: ScanErrorCode; message: string } | null;
  raw_s3_key: string | null;
  metrics: { warnings: string[] };
  documents?: unknown[];
}

// Compiled on first use, not at load: the poller's cold start never validates a request.
let compiled: { request: ValidateFunction<ScanRequest>; envelope: ValidateFunction<Envelope> } | undefined;
function validators() {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: false, strict: true });
    addFormats(ajv, ['uuid', 'date-time']);
    compiled = { request: ajv.compile<ScanRequest>(requestSchema), envelope: ajv.compile<Envelope>(envelopeSchema) };
  }
  return compiled;
}

/** Whether a value is an envelope of the published contract. */
export const validateEnvelope = (value: unknown): value is Envelope => validators().envelope(value);

export const MAX_MESSAGE_LENGTH = 4000;

export type EnvelopeIds = { job_id: string; file_id: string; attempt: number };

export type ParsedRequest =
  | { ok: true; request: ScanRequest }
  /** Invalid; `ids` when a job id AND a file id could still be read, so the sender hears why. */
  | { ok: false; reason: string; ids?: EnvelopeIds };

export function parseScanRequest(data: string): ParsedRequest {
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const validateRequest = validators().request;
  if (validateRequest(body)) return { ok: true, request: contractFields(body) };
  const error = validateRequest.errors?.[0];
  const reason = `${error?.instancePath || 'request'} ${error?.message ?? 'is invalid'}`.trim();
  return { ok: false, reason, ids: extractIds(body) };
}

/**
 * Only the contract's fields, rebuilt by name: a later minor version may add
 * fields (the schema lets them through), but nothing we did not name reaches
 * the store — not `__proto__`, not a number that parsed to Infinity, not
 * nesting deeper than DynamoDB holds. Ids are lower-cased here, once: two
 * spellings of one UUID are one job.
 */
function contractFields(r: ScanRequest): ScanRequest {
  return {
    schema_version: r.schema_version,
    job_id: r.job_id.toLowerCase(),
    file_id: r.file_id.toLowerCase(),
    attempt: r.attempt,
    pipeline: r.pipeline,
    s3: { bucket: r.s3.bucket, key: r.s3.key },
    original_name: r.original_name,
    reply_deadline: r.reply_deadline,
  };
}

const UUID = /^(?:urn:uuid:)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The canonical lower-case UUID of a value, when it is one (an `urn:uuid:` spelling is read, then refused by the schema). */
function readUuid(value: unknown): string | undefined {
  const m = typeof value === 'string' ? UUID.exec(value) : null;
  return m ? m[1].toLowerCase() : undefined;
}

/**
 * The ids of a refused request, for its SCHEMA_MISMATCH answer: only when
 * BOTH ids are readable (an envelope without a file id helps no one and
 * breaks the envelope schema); `attempt` from the body when it is an
 * integer ≥ 1, else 1 — never null.
 */
function extractIds(body: unknown): EnvelopeIds | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  const job_id = readUuid(b.job_id);
  const file_id = readUuid(b.file_id);
  if (!job_id || !file_id) return undefined;
  return {
    job_id,
    file_id,
    attempt: Number.isSafeInteger(b.attempt) && (b.attempt as number) >= 1 ? (b.attempt as number) : 1,
  };
}

/**
 * A message bounded to MAX_MESSAGE_LENGTH UTF-16 units without cutting a
 * surrogate pair in two; lone surrogates (unencodable in UTF-8, refused by
 * strict JSON consumers) become U+FFFD.
 */
export function boundedMessage(text: string): string {
  // String.prototype.toWellFormed is outside the ES2023 typings we compile against.
  const clean = (text as string & { toWellFormed(): string }).toWellFormed();
  if (clean.length <= MAX_MESSAGE_LENGTH) return clean;
  const cut = clean.slice(0, MAX_MESSAGE_LENGTH);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

export interface EnvelopeParts {
  error?: { code: ScanErrorCode; message: string } | null;
  raw_s3_key?: string | null;
  warnings?: string[];
  documents?: unknown[];
}

/** An envelope that would break the contract's rules between its status, error and documents. */
export class EnvelopeInvariantError extends Error {
  readonly code = 'ENVELOPE_INVARIANT';
  constructor(status: string, rule: string) {
    super(`a ${status} envelope ${rule}`);
    this.name = 'EnvelopeInvariantError';
  }
}

/**
 * The contract's rules between status, error and documents, in this one place
 * (the schema says the same in its `allOf`): `error` carries an error and
 * forbids documents; `done` and `needs_check` carry no error and a non-empty
 * list of documents; `processing` carries neither. An empty list given with
 * `error` is dropped (a normaliser's "none"); anything else breaking a rule
 * throws, before anything is stored or published.
 */
export function checkEnvelopeParts(status: EnvelopeStatus, parts: EnvelopeParts): EnvelopeParts {
  const documents = parts.documents;
  if (documents !== undefined && !Array.isArray(documents))
    throw new EnvelopeInvariantError(status, 'has documents that are not a list');
  switch (status) {
    case 'error':
      if (!parts.error) throw new EnvelopeInvariantError(status, 'needs an error');
      if (documents && documents.length > 0) throw new EnvelopeInvariantError(status, 'forbids documents');
      return { ...parts, documents: undefined };
    case 'done':
    case 'needs_check':
      if (parts.error) throw new EnvelopeInvariantError(status, 'forbids an error');
      if (!documents || documents.length === 0)
        throw new EnvelopeInvariantError(status, 'needs a non-empty list of documents');
      return parts;
    case 'processing':
      if (parts.error) throw new EnvelopeInvariantError(status, 'forbids an error');
      if (documents) throw new EnvelopeInvariantError(status, 'forbids documents');
      return parts;
    default:
      throw new EnvelopeInvariantError(String(status), 'has no status of the contract');
  }
}

export function envelope(
  status: EnvelopeStatus,
  ids: EnvelopeIds,
  service: { name: string; version: string },
  given: EnvelopeParts = {},
): Envelope {
  const parts = checkEnvelopeParts(status, given);
  return {
    schema_version: SCHEMA_VERSION,
    job_id: ids.job_id,
    file_id: ids.file_id,
    attempt: ids.attempt,
    status,
    service,
    error: parts.error ? { code: parts.error.code, message: boundedMessage(parts.error.message) } : null,
    raw_s3_key: parts.raw_s3_key ?? null,
    metrics: { warnings: (parts.warnings ?? []).map(boundedMessage) },
    ...(parts.documents ? { documents: parts.documents } : {}),
  };
}

/** Header `Nats-Msg-Id`: lets a deduplicating consumer drop a re-published envelope. */
export function natsMsgId(e: Pick<Envelope, 'job_id' | 'attempt' | 'status'>): string {
  return `${e.job_id}:${e.attempt}:${e.status}`;
}
