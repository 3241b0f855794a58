/**
 * What every HTTP function answers: API Gateway's structured result (payload
 * 2.0) narrowed to what we send. One type for the whole edge: the idempotency
 * layer stores and replays exactly this, so no layer needs a cast.
 */
export interface HttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  /** Set-Cookie values (payload 2.0 sends them apart from the headers). */
  cookies?: string[];
}

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}
