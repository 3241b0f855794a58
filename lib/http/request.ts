import Ajv, { ErrorObject, JSONSchemaType, ValidateFunction } from 'ajv';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { parseId } from '../ident';
import { ErrorCode, HttpError } from './errors';

/** Reading requests at the edge: one body parser, one id parser, one validator. */

export const MAX_BODY_BYTES = 64 * 1024;
export const MAX_JSON_DEPTH = 16;

/** maxBytes: MAX_BODY_BYTES unless a route takes more (POST /downloads: a base64 .torrent). */
export function jsonBody(
  event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>,
  maxBytes = MAX_BODY_BYTES,
): unknown {
  const contentType = header(event.headers, 'content-type');
  if (contentType && !/^application\/(.+\+)?json\b/i.test(contentType)) {
    throw new HttpError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'the body must be application/json');
  }
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.length > maxBytes) {
    throw new HttpError(413, ErrorCode.PAYLOAD_TOO_LARGE, `the body is larger than ${maxBytes} bytes`, {
      limit: maxBytes,
    });
  }
  if (bytes.length === 0) throw new HttpError(400, ErrorCode.INVALID_REQUEST, 'a JSON body is required');
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, 'the body is not valid JSON');
  }
  if (depth(parsed) > MAX_JSON_DEPTH) {
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, `the body nests deeper than ${MAX_JSON_DEPTH} levels`, {
      limit: MAX_JSON_DEPTH,
    });
  }
  return parsed;
}

/** `{id}` of the path, parsed once: an invalid id is a 404 before any storage call. */
export function pathId(event: Pick<APIGatewayProxyEventV2, 'pathParameters'>, name = 'id'): string {
  return parseId(event.pathParameters?.[name]);
}

// Built and compiled on first use, not at load: a cold start of a route that validates nothing never pays for it.
let ajv: Ajv | undefined;

export type Validator<T> = (value: unknown) => T;

/** Compiles a JSON Schema once, at its first use; the validator throws a 400 naming the first problem. */
export function validator<T>(schema: JSONSchemaType<T> | Record<string, unknown>): Validator<T> {
  let validate: ValidateFunction<T> | undefined;
  return (value) => {
    validate ??= (ajv ??= new Ajv({ allErrors: false, strict: true, coerceTypes: false })).compile<T>(schema);
    if (validate(value)) return value;
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, describe(validate.errors?.[0]));
  };
}

function describe(error: ErrorObject | undefined): string {
  if (!error) return 'invalid request';
  const where = error.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : 'body';
  if (error.keyword === 'additionalProperties')
    return `unknown field ${JSON.stringify(error.params.additionalProperty)} in ${where}`;
  return `${where} ${error.message}`;
}

/** A request header by name, whatever its case (offline keeps the client's case; API Gateway lowercases). */
export function header(headers: Record<string, string | undefined> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key ? headers[key] : undefined;
}

function depth(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, level] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    max = Math.max(max, level);
    if (max > MAX_JSON_DEPTH) return max;
    for (const child of Object.values(node)) stack.push([child, level + 1]);
  }
  return max;
}
