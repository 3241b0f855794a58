import { KMSClient } from '@aws-sdk/client-kms';
import { DYNAMODB_LIMITS } from './clients';

/**
 * The KMS client of the token sealer (lib/secrets/kms-sealer.ts). Its endpoint
 * is not passed: the SDK reads AWS_ENDPOINT_URL_KMS / AWS_ENDPOINT_URL itself
 * (moto's server in tests). Bounded like DynamoDB's calls: a hung KMS fails
 * inside the function's timeout, as a 503 at the API.
 */
export function createKmsClient(region: string, limits = DYNAMODB_LIMITS): KMSClient {
  return new KMSClient({
    region,
    maxAttempts: limits.maxAttempts,
    requestHandler: {
      connectionTimeout: limits.connectionTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
}
