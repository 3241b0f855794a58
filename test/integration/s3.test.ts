import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../../lib/ident';
import { stackClients, stackConfig } from '../support/stack';

describe('S3 emulator with @aws-sdk/client-s3 v3 (default checksum settings)', () => {
  const { s3 } = stackClients();
  const Bucket = stackConfig().buckets.files;
  afterAll(() => s3.destroy());

  it('puts, heads, lists and gets back the same bytes', async () => {
    const prefix = `test/${newId()}/`;
    const body = randomBytes(256 * 1024);
    await s3.send(
      new PutObjectCommand({ Bucket, Key: `${prefix}a.bin`, Body: body, ContentType: 'application/octet-stream' }),
    );
    await s3.send(new PutObjectCommand({ Bucket, Key: `${prefix}b.json`, Body: '{"x":1}' }));

    const head = await s3.send(new HeadObjectCommand({ Bucket, Key: `${prefix}a.bin` }));
    expect(head.ContentLength).toBe(body.length);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: prefix }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual([`${prefix}a.bin`, `${prefix}b.json`]);

    const got = await s3.send(new GetObjectCommand({ Bucket, Key: `${prefix}a.bin` }));
    const bytes = Buffer.from(await got.Body!.transformToByteArray());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(createHash('sha256').update(body).digest('hex'));
  });

  it('answers a missing key with the typed NoSuchKey error', async () => {
    await expect(s3.send(new GetObjectCommand({ Bucket, Key: `test/${newId()}/missing` }))).rejects.toBeInstanceOf(
      NoSuchKey,
    );
  });
});
