import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ErrorCode, HttpError } from './errors';
import { header } from './request';

/**
 * `multipart/form-data` (RFC 7578) of a buffered Lambda event: API Gateway
 * and serverless offline both hand a multipart body over base64-encoded
 * (`isBase64Encoded`), so it is read as bytes, never as text. Bounded: the
 * body's size, the number of parts, each part's headers. A part is a field
 * (text) or, with a `filename`, a file (bytes). Decision 402: our own reader
 * of a body already in memory, not a streaming parser from npm.
 */

export interface MultipartPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

const MAX_PARTS = 16;
const MAX_PART_HEADER_BYTES = 4096;

export function isMultipart(headers: Record<string, string | undefined> | undefined): boolean {
  return /^multipart\/form-data\b/i.test(header(headers, 'content-type') ?? '');
}

/** The raw bytes of an event's body, whatever its encoding, refused past maxBytes (413). */
export function bodyBytes(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded'>, maxBytes: number): Buffer {
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.length > maxBytes)
    throw new HttpError(413, ErrorCode.PAYLOAD_TOO_LARGE, `the body is larger than ${maxBytes} bytes`, {
      limit: maxBytes,
    });
  return bytes;
}

export function multipartBody(
  event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>,
  maxBytes: number,
): MultipartPart[] {
  const contentType = header(event.headers, 'content-type') ?? '';
  const boundary = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  if (!boundary) throw bad('the multipart body has no boundary in its content-type');
  const body = bodyBytes(event, maxBytes);
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`, 'latin1');
  const parts: MultipartPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw bad('the multipart body has no part');
  for (;;) {
    at += delimiter.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts; // the closing delimiter: `--boundary--`
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a) throw bad('a multipart delimiter is not followed by CRLF');
    at += 2;
    const headerEnd = body.indexOf('\r\n\r\n', at, 'latin1');
    if (headerEnd < 0 || headerEnd - at > MAX_PART_HEADER_BYTES) throw bad('a multipart part has no readable headers');
    const headers = body.subarray(at, headerEnd).toString('utf8').split('\r\n');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n', 'latin1'), delimiter]), headerEnd + 4);
    if (next < 0) throw bad('the multipart body ends inside a part');
    if (parts.length >= MAX_PARTS) throw bad(`the multipart body has more than ${MAX_PARTS} parts`);
    parts.push({ ...partHeaders(headers), data: body.subarray(headerEnd + 4, next) });
    at = next + 2;
  }
}

function partHeaders(lines: string[]): Omit<MultipartPart, 'data'> {
  let name: string | undefined;
  let filename: string | undefined;
  let contentType: string | undefined;
  for (const line of lines) {
    const colon = line.indexOf(':');
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'content-disposition') {
      if (!/^form-data\s*(;|$)/i.test(value)) throw bad('a multipart part is not form-data');
      name = param(value, 'name');
      filename = param(value, 'filename');
    } else if (key === 'content-type') contentType = value;
  }
  if (!name) throw bad('a multipart part has no name');
  return { name, ...(filename !== undefined ? { filename } : {}), ...(contentType ? { contentType } : {}) };
}

function param(value: string, key: string): string | undefined {
  const m =
    new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(value) ??
    new RegExp(`;\\s*${key}=([^;\\s"]+)`, 'i').exec(value);
  return m ? m[1].replace(/\\(.)/g, '$1') : undefined;
}

const bad = (message: string) => new HttpError(400, ErrorCode.INVALID_REQUEST, message);
