/** The emulator's error answers: the table of API codes it sends, and the REST gateway's error body. */

/** How answers are dressed: where an error body carries the API code, how headers are named. */
export interface Wire {
  errorCodeIn: 'message' | 'description';
  headers: 'prefixed' | 'bare';
}
export const DEFAULT_WIRE: Wire = { errorCodeIn: 'message', headers: 'prefixed' };

// The documented error codes: HTTP status, gRPC code, message.
export const ERRORS: Record<number, [number, number, string]> = {
  12002: [503, 12, 'the method is retired'],
  30001: [400, 3, 'missing or invalid parameter'],
  30238: [400, 3, 'no data for the specified period'],
  40002: [403, 7, 'insufficient privileges'],
  40003: [401, 16, 'authentication token is missing or invalid'],
  50002: [404, 5, 'instrument not found'],
  50004: [404, 5, 'account not found'],
  70001: [500, 13, 'internal error'],
  70002: [503, 14, 'internal network error'],
  70003: [500, 13, 'internal error'],
  80002: [429, 8, 'request limit exceeded'],
};

/** An API error a handler throws; the server answers it with `errorAnswer`. */
export class ApiError extends Error {
  constructor(
    readonly apiCode: number,
    message?: string,
  ) {
    super(message ?? ERRORS[apiCode]?.[2] ?? 'error');
  }
}

/** The HTTP status and body the gateway sends for `apiCode`, the code in `message` or `description` as `wire` says. */
export function errorAnswer(apiCode: number, wire: Wire, message?: string): { status: number; body: unknown } {
  const [status, code, text] = ERRORS[apiCode] ?? [500, 13, 'internal error'];
  const said = message ?? text;
  return {
    status,
    body:
      wire.errorCodeIn === 'message'
        ? { code, message: String(apiCode), description: said, details: [] }
        : { code, message: said, description: String(apiCode), details: [] },
  };
}
