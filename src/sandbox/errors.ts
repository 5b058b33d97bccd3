/**
 * API errors. Every error status answers `{"error":{"code","reason",...extra}}` (contract row 8); a
 * route throws an ApiError and the server turns it into that body.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly reason: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(reason);
    this.name = 'ApiError';
  }

  body(): { error: Record<string, unknown> } {
    return { error: { code: this.code, reason: this.reason, ...this.extra } };
  }
}

export function invalidParameter(parameter: string, reason: string, extra: Record<string, unknown> = {}): ApiError {
  return new ApiError(400, 'invalid_parameter', reason, { parameter, ...extra });
}

export function missingParameter(parameter: string): ApiError {
  return new ApiError(400, 'missing_parameter', `The parameter '${parameter}' is required.`, { parameter });
}

export function unprocessable(code: string, reason: string, extra: Record<string, unknown> = {}): ApiError {
  return new ApiError(422, code, reason, extra);
}
