import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config';

/**
 * Client factories. Endpoints are not passed: the SDK reads
 * AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_S3 itself (docs/architecture.md).
 * The S3 client is made, and its module loaded, at first use (lib/aws/s3.ts).
 */

export interface AwsClients {
  dynamodb: DynamoDBClient;
  documents: DynamoDBDocumentClient;
  s3: S3Client;
}

/**
 * DynamoDB calls are bounded: a hung endpoint (the SDK waits forever by default)
 * fails after at most 2 attempts × 2.5 s plus a short backoff, well inside the
 * 10 s Lambda timeout, so the API answers 503 instead of timing out (lib/aws/unavailable).
 */
export const DYNAMODB_LIMITS = { maxAttempts: 2, connectionTimeoutMs: 1000, requestTimeoutMs: 2500 };
/** Operator tools (an import of 10,000 rows, benchmarks, test fixtures) wait longer: nobody is holding a request open. */
export const TOOL_DYNAMODB_LIMITS = { maxAttempts: 4, connectionTimeoutMs: 2000, requestTimeoutMs: 30_000 };

export function createAwsClients(config: Pick<Config, 'region' | 'endpoints'>, limits = DYNAMODB_LIMITS): AwsClients {
  const dynamodb = new DynamoDBClient({
    region: config.region,
    maxAttempts: limits.maxAttempts,
    // throwOnRequestTimeout: without it this SDK release only warns when requestTimeout passes.
    requestHandler: {
      connectionTimeout: limits.connectionTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
  const documents = DynamoDBDocumentClient.from(dynamodb, {
    marshallOptions: { removeUndefinedValues: true },
  });
  let s3: S3Client | undefined;
  return {
    dynamodb,
    documents,
    get s3() {
      return (s3 ??= loadS3().createS3Client(config.region, config.endpoints.s3 !== undefined));
    },
  };
}

// A require at first use, not an import: the bundler then evaluates the S3 client only when a function asks for it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadS3 = () => require('./s3') as typeof import('./s3');

let cached: AwsClients | undefined;

/** Clients shared across invocations of one Lambda container. */
export function awsClients(config: Pick<Config, 'region' | 'endpoints'>): AwsClients {
  cached ??= createAwsClients(config);
  return cached;
}
