import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ErrorCode, HttpError } from '../http/errors';
import { isMultipart, multipartBody } from '../http/multipart';
import { header, MAX_BODY_BYTES } from '../http/request';

/**
 * HTML form bodies at the edge: urlencoded only, bounded, each field at most
 * once. The result is a plain object that the SAME validators as the JSON
 * API (lib/http/request `validator`) then shape; nothing here knows a field.
 * A form with a file input (`fileForms`) may also come as multipart/form-data.
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

/** A file of a multipart form (a part with a `filename`; a file input left empty sends `filename=""`, no bytes). */
export interface FormFile {
  filename: string;
  contentType?: string;
  data: Buffer;
}

/**
 * The routes whose form has a file input, by route key, and the body bound each takes: given to `webHandler`
 * by the function that serves them (the add form's: lib/web/add-form.ts, decision 406), so a page function
 * without one bundles no file reader's bounds.
 */
export type FileForms = Readonly<Record<string, number>>;

/**
 * A POST's fields and files: multipart only on a route of `fileForms` (a text part at most MAX_BODY_BYTES,
 * each part once), otherwise the urlencoded `formBody`.
 */
export function formParts(
  event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers' | 'routeKey'>,
  fileForms: FileForms = {},
): { fields: Record<string, string>; files: Record<string, FormFile> } {
  const maxBytes = fileForms[event.routeKey];
  if (maxBytes === undefined || !isMultipart(event.headers)) return { fields: formBody(event), files: {} };
  const fields: Record<string, string> = {};
  const files: Record<string, FormFile> = {};
  for (const part of multipartBody(event, maxBytes)) {
    if (
      Object.prototype.hasOwnProperty.call(fields, part.name) ||
      Object.prototype.hasOwnProperty.call(files, part.name)
    )
      throw new HttpError(
        400,
        ErrorCode.INVALID_REQUEST,
        `field ${JSON.stringify(part.name.slice(0, 40))} appears twice`,
      );
    if (part.filename !== undefined) {
      files[part.name] = {
        filename: part.filename,
        ...(part.contentType ? { contentType: part.contentType } : {}),
        data: part.data,
      };
    } else {
      if (part.data.length > MAX_BODY_BYTES)
        throw new HttpError(413, ErrorCode.PAYLOAD_TOO_LARGE, `a form field is larger than ${MAX_BODY_BYTES} bytes`, {
          limit: MAX_BODY_BYTES,
        });
      fields[part.name] = part.data.toString('utf8');
    }
  }
  return { fields, files };
}

/** The query string of a page, with empty fields dropped (a form submits its blank inputs). */
export function pageQuery(query: Record<string, string | undefined> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(query ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''),
  );
}
