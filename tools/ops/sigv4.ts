import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for the one request shape the ops tools send
 * outside the SDK: a POST of a JSON body to a service endpoint's root (SQS's
 * JSON protocol, tools/ops/sqs.ts). The SDK's SQS client is not a dependency
 * of this project (docs/decisions.md, 282); this is the signer the SDK would
 * apply, checked against its own (`@smithy/signature-v4`) by
 * test/unit/ops/sigv4.test.ts.
 */

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface Unsigned {
  method: 'POST';
  url: URL;
  /** Header names in any case; `host` and `x-amz-date` are added. */
  headers: Record<string, string>;
  body: string;
}

const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** `20150830T123600Z`: the form SigV4 signs. */
export const amzDate = (now: Date) =>
  now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** The request's headers with `authorization` (and the session token, when there is one) added. */
export function signV4(
  request: Unsigned,
  scope: { service: string; region: string },
  credentials: Credentials,
  now: Date,
): Record<string, string> {
  if (request.url.pathname !== '/' || request.url.search !== '')
    throw new Error(
      `signV4 signs requests to an endpoint's root only, not ${request.url.pathname}${request.url.search}`,
    );
  const date = amzDate(now);
  const day = date.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers.host = request.url.host;
  headers['x-amz-date'] = date;
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  const names = Object.keys(headers).sort();
  const canonical = [
    request.method,
    '/',
    '',
    names.map((n) => `${n}:${headers[n].trim().replace(/\s+/g, ' ')}\n`).join(''),
    names.join(';'),
    sha256(request.body),
  ].join('\n');
  const credentialScope = `${day}/${scope.region}/${scope.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, credentialScope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${credentials.secretAccessKey}`, day);
  for (const part of [scope.region, scope.service, 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  headers.authorization =
    `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${credentialScope}, ` +
    `SignedHeaders=${names.join(';')}, Signature=${signature}`;
  return headers;
}
