import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { validateObjectKey } from '../names';
import type { ScanFiles } from './store';

export const MAX_INPUT_BYTES = 200 * 1024 * 1024;

export class S3ScanFiles implements ScanFiles {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async read(bucket: string, key: string): Promise<Buffer> {
    // A key that climbs out of its prefix is refused before the call (s3rver and other file-backed stores map keys to paths).
    validateObjectKey(key);
    const out = await this.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if ((out.ContentLength ?? 0) > MAX_INPUT_BYTES) throw new Error(`object is larger than ${MAX_INPUT_BYTES} bytes`);
    return Buffer.from(await out.Body!.transformToByteArray());
  }

  async writeRaw(key: string, body: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: 'application/json' }),
    );
  }
}
