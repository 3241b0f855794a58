import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { validateObjectKey } from '../names';
import type { ScanInput } from './input';
import type { ScanFiles } from './store';

export const MAX_INPUT_BYTES = 200 * 1024 * 1024;

export class S3ScanFiles implements ScanFiles {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async open(bucket: string, key: string): Promise<ScanInput> {
    // A key that climbs out of its prefix is refused before the call (s3rver and other file-backed stores map keys to paths).
    validateObjectKey(key);
    const out = await this.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const body = out.Body as Readable;
    const length = out.ContentLength;
    if (length === undefined || length > MAX_INPUT_BYTES) {
      body.destroy();
      throw new Error(length === undefined ? 'object has no length' : `object is larger than ${MAX_INPUT_BYTES} bytes`);
    }
    return { length, body };
  }

  async read(bucket: string, key: string): Promise<Buffer> {
    const { length, body } = await this.open(bucket, key);
    // Into one buffer of the object's length as it arrives: the SDK's transformToByteArray joins its chunks into
    // a second copy, and Buffer.from() of that made a third (150 MiB held 450 MiB at once; decision 394).
    const bytes = Buffer.allocUnsafe(length);
    let at = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (at + chunk.length > length) {
        body.destroy();
        throw new Error(`object is longer than its ${length} bytes`);
      }
      at += chunk.copy(bytes, at);
    }
    if (at !== length) throw new Error(`object ended after ${at} of its ${length} bytes`);
    return bytes;
  }

  async writeRaw(key: string, body: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: 'application/json' }),
    );
  }
}
