import { SignatureV4 } from '@smithy/signature-v4';
import type { SourceData } from '@smithy/types';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { amzDate, signV4 } from '../../../tools/ops/sigv4';

/** The SDK's own signer (a dependency of every AWS SDK client) is the reference for ours. */
const bytes = (data: SourceData): Buffer =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

class Sha256 {
  private hash: Hash | Hmac;
  private readonly secret?: Buffer;
  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : bytes(secret);
    this.hash = this.fresh();
  }
  private fresh() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
  update(data: SourceData) {
    this.hash.update(bytes(data));
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
  reset() {
    this.hash = this.fresh();
  }
}

describe('signV4', () => {
  const when = new Date('2026-12-06T08:44:40.123Z');
  const body = JSON.stringify({
    QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/q',
    MaxNumberOfMessages: 10,
  });
  const headers = { 'content-type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.ReceiveMessage' };

  it.each([
    ['long-term keys', { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }],
    [
      'a session',
      { accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'c2VjcmV0', sessionToken: 'FwoGZXIvYXdzEJr//////////token' },
    ],
  ])(
    'signs as the SDK does, with %s',
    async (_what, credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }) => {
      const url = new URL('https://sqs.eu-west-1.amazonaws.com/');
      const ours = signV4(
        { method: 'POST', url, headers, body },
        { service: 'sqs', region: 'eu-west-1' },
        credentials,
        when,
      );
      const reference = await new SignatureV4({
        credentials,
        region: 'eu-west-1',
        service: 'sqs',
        sha256: Sha256,
        applyChecksum: false,
      }).sign(
        {
          method: 'POST',
          protocol: 'https:',
          hostname: url.hostname,
          path: '/',
          query: {},
          headers: { ...headers, host: url.host },
          body,
        },
        { signingDate: when },
      );
      expect(ours.authorization).toBe(reference.headers.authorization);
      expect(ours['x-amz-date']).toBe('20261206T084440Z');
      expect(ours['x-amz-security-token']).toBe(credentials.sessionToken);
    },
  );

  it('signs a local endpoint with its port, and refuses a path it does not canonicalise', () => {
    const local = signV4(
      { method: 'POST', url: new URL('http://127.0.0.1:5000/'), headers, body },
      { service: 'sqs', region: 'us-east-1' },
      { accessKeyId: 'test', secretAccessKey: 'test' },
      when,
    );
    expect(local.host).toBe('127.0.0.1:5000');
    expect(local.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=test\/20261206\/us-east-1\/sqs\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=[0-9a-f]{64}$/,
    );
    expect(() =>
      signV4(
        { method: 'POST', url: new URL('http://127.0.0.1:5000/q?x=1'), headers, body },
        { service: 'sqs', region: 'us-east-1' },
        { accessKeyId: 'test', secretAccessKey: 'test' },
        when,
      ),
    ).toThrow(/root only/);
    expect(amzDate(new Date('2015-08-30T12:36:00Z'))).toBe('20150830T123600Z');
  });
});
