import { randomBytes } from 'node:crypto';
import { toHttpError } from '../http/errors';
import type { HttpResult } from '../http/response';
import type { Notice } from './shell';

/** The UI's HTTP answers: an HTML page with its CSP nonce, a redirect, the headers every answer carries. */

export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

export const SECURITY_HEADERS = {
  // HTTPS only for a year on this host (browsers ignore it on a plain-http answer: the local stack is unaffected).
  // No includeSubDomains: the operator's other hosts are not ours to decide.
  'strict-transport-security': 'max-age=31536000',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

export function htmlResult(statusCode: number, body: string, nonce: string, cookies?: string[]): HttpResult {
  return {
    statusCode,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      // Inline style and script run only with this response's nonce: injected markup could not run script even if escaping failed.
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      ...SECURITY_HEADERS,
    },
    ...(cookies ? { cookies } : {}),
    body,
  };
}

export function redirect(location: string, cookies?: string[]): HttpResult {
  return { statusCode: 303, headers: { location, ...SECURITY_HEADERS }, ...(cookies ? { cookies } : {}), body: '' };
}

/** A refusal of the API's mapping, as the page shows it. */
export function noticeOf(err: unknown): { status: number; notice: Notice } {
  const { status, body } = toHttpError(err);
  const owner = typeof body.error.owner_id === 'string' ? body.error.owner_id : undefined;
  return { status, notice: { code: body.error.code, message: body.error.message, ownerId: owner } };
}
