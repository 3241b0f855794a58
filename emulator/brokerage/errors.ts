/**
 * The emulator's error answers. The API codes it sends, each with the gRPC type and the `message`
 * of T-Bank's official error table (investAPI `src/docs/errors/api_errors.json`, release 1.43,
 * vendored as test/contracts/tbank/api_errors.json; the conformance test holds `API_ERRORS` to it),
 * and the REST gateway's own answers (grpc-gateway, which maps a gRPC code to an HTTP status).
 */

/** How answers are dressed: where an error body carries the API code, how headers are named. */
export interface Wire {
  errorCodeIn: 'message' | 'description';
  headers: 'prefixed' | 'bare';
}
export const DEFAULT_WIRE: Wire = { errorCodeIn: 'message', headers: 'prefixed' };

/**
 * The gRPC status types the table uses: their code (google/rpc/code.proto) and the HTTP status the
 * gateway answers with (grpc-gateway `runtime/errors.go`, HTTPStatusFromCode).
 */
export const GRPC_TYPES = {
  INVALID_ARGUMENT: { code: 3, http: 400 },
  NOT_FOUND: { code: 5, http: 404 },
  PERMISSION_DENIED: { code: 7, http: 403 },
  RESOURCE_EXHAUSTED: { code: 8, http: 429 },
  FAILED_PRECONDITION: { code: 9, http: 400 },
  UNIMPLEMENTED: { code: 12, http: 501 },
  INTERNAL: { code: 13, http: 500 },
  UNAVAILABLE: { code: 14, http: 503 },
  UNAUTHENTICATED: { code: 16, http: 401 },
} as const;
export type GrpcType = keyof typeof GRPC_TYPES;

/** Every API code the emulator can send, as the official table has it (type and message, verbatim). */
export const API_ERRORS = {
  12001: { type: 'UNIMPLEMENTED', message: 'Method is unimplemented' },
  12002: { type: 'UNAVAILABLE', message: 'Deprecated method is unavailable' },
  30001: { type: 'INVALID_ARGUMENT', message: 'Missing parameter: `from`' },
  30005: { type: 'INVALID_ARGUMENT', message: '`id_type` is invalid' },
  30006: { type: 'INVALID_ARGUMENT', message: 'Missing parameter: `id_type`' },
  30007: { type: 'INVALID_ARGUMENT', message: 'Missing parameter: `id`' },
  30009: { type: 'INVALID_ARGUMENT', message: '`from` is invalid' },
  30010: { type: 'INVALID_ARGUMENT', message: '`to` is invalid' },
  30012: { type: 'INVALID_ARGUMENT', message: "`to` can't be less than `from`" },
  30013: { type: 'INVALID_ARGUMENT', message: '`class_code` require for `id_type` = `ticker`' },
  30021: { type: 'INVALID_ARGUMENT', message: 'Missing parameter: `account_id`' },
  30069: { type: 'INVALID_ARGUMENT', message: 'Invalid parameter: `limit`' },
  30093: { type: 'INVALID_ARGUMENT', message: 'Missing parameter: `figi` or `instrument_id`' },
  30237: { type: 'INVALID_ARGUMENT', message: 'Missing parameter: `instrument_id`' },
  30238: { type: 'INVALID_ARGUMENT', message: 'No data for the specified period' },
  40002: { type: 'PERMISSION_DENIED', message: 'Insufficient privileges' },
  40003: { type: 'UNAUTHENTICATED', message: 'Authentication token is missing or invalid' },
  50002: { type: 'NOT_FOUND', message: 'Instrument not found' },
  50004: { type: 'NOT_FOUND', message: 'Account not found' },
  70001: { type: 'INTERNAL', message: 'Internal error' },
  70002: { type: 'INTERNAL', message: 'Internal network error' },
  70003: { type: 'INTERNAL', message: 'Internal error, please try again later' },
  80002: { type: 'RESOURCE_EXHAUSTED', message: 'Request limit exceeded' },
} as const satisfies Record<number, { type: GrpcType; message: string }>;
export type ApiCode = keyof typeof API_ERRORS;

export const isApiCode = (code: unknown): code is ApiCode =>
  typeof code === 'number' && Object.prototype.hasOwnProperty.call(API_ERRORS, code);

/** An API error a handler throws; the server answers it with `errorAnswer`. */
export class ApiError extends Error {
  constructor(readonly apiCode: ApiCode) {
    super(API_ERRORS[apiCode].message);
  }
}

export interface ErrorAnswer {
  status: number;
  body: { code: number; message: string; description?: string; details: unknown[] };
}

/**
 * The gateway's answer to an API error: the gRPC code of the official type, its HTTP status, the
 * 5-digit code in `message` (the gRPC status message) and the official text in `description`, or
 * the other way round as `wire` says.
 */
export function errorAnswer(apiCode: ApiCode, wire: Wire): ErrorAnswer {
  const { type, message } = API_ERRORS[apiCode];
  const { code, http } = GRPC_TYPES[type];
  return {
    status: http,
    body:
      wire.errorCodeIn === 'message'
        ? { code, message: String(apiCode), description: message, details: [] }
        : { code, message, description: String(apiCode), details: [] },
  };
}

/**
 * The gateway's own refusals, before any API method runs (grpc-gateway `runtime/errors.go`: a path it
 * does not route is NotFound, a method it does not allow Unimplemented, a body it cannot decode
 * InvalidArgument with the decoder's text); they carry no API code.
 */
export function gatewayAnswer(type: 'NOT_FOUND' | 'UNIMPLEMENTED' | 'INVALID_ARGUMENT', text: string): ErrorAnswer {
  const { code, http } = GRPC_TYPES[type];
  return { status: http, body: { code, message: text, details: [] } };
}
