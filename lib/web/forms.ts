import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ErrorCode, HttpError } from '../http/errors';
import { header } from '../http/request';

/**
 * HTML form bodies at the edge: urlencoded only, bounded, each field at most
 * once. The result is a plain object that the SAME validators as the JSON
 * API (lib/http/request `validator`) then shape; nothing here knows a field.
 */

export const MAX_FORM_BYTES = 8 * 1024;

export function formBody(
  event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>,
): Record<string, string> {
  const contentType = header(event.headers, 'content-type') ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(contentType)) {
    throw new HttpError(
      415,
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      'the form must be sent as application/x-www-form-urlencoded',
    );
  }
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.length > MAX_FORM_BYTES) {
    throw new HttpError(413, ErrorCode.PAYLOAD_TOO_LARGE, `the form is larger than ${MAX_FORM_BYTES} bytes`, {
      limit: MAX_FORM_BYTES,
    });
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(bytes.toString('utf8'))) {
    if (Object.prototype.hasOwnProperty.call(fields, name))
      throw new HttpError(400, ErrorCode.INVALID_REQUEST, `field ${JSON.stringify(name.slice(0, 40))} appears twice`);
    fields[name] = value;
  }
  return fields;
}

/** The query string of a page, with empty fields dropped (a form submits its blank inputs). */
export function pageQuery(query: Record<string, string | undefined> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(query ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''),
  );
}
