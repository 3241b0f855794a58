import { S3Client } from '@aws-sdk/client-s3';

/**
 * The S3 client, in a module of its own so that lib/aws/clients.ts loads it at
 * first use: a function that never touches S3 (most of them) never evaluates
 * the S3 client at cold start. Emulators serve buckets by path, not by virtual
 * host, hence forcePathStyle whenever an S3 endpoint is configured.
 */
export function createS3Client(region: string, endpointConfigured: boolean): S3Client {
  return new S3Client({ region, forcePathStyle: endpointConfigured, maxAttempts: 3 });
}
