/**
 * The one error type of the API: a machine code from a closed list, mapped to one HTTP
 * status, rendered as one envelope `{error: {message, code, data}}`.
 */
import type { z } from "zod";

export const errorStatus = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_SUPPORTED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorBody {
  error: { message: string; code: ErrorCode; data: Record<string, unknown> };
}

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data: Record<string, unknown> = {},
    /** Extra response headers, such as Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  get status(): number {
    return errorStatus[this.code];
  }

  toBody(): ErrorBody {
    return {
      error: { message: this.message, code: this.code, data: { ...this.data, httpStatus: this.status } },
    };
  }
}

export const badRequest = (message: string, data?: Record<string, unknown>) =>
  new ApiError("BAD_REQUEST", message, data);
export const notFound = (what: string) => new ApiError("NOT_FOUND", `${what} not found`);
export const forbidden = (message: string) => new ApiError("FORBIDDEN", message);
export const conflict = (message: string, data?: Record<string, unknown>) =>
  new ApiError("CONFLICT", message, data);
export const unauthorized = (message = "Authentication required") => new ApiError("UNAUTHORIZED", message);

/** Seconds a client is told to wait (Retry-After) when a dependency is away. */
const RETRY_AFTER_SECONDS = "5";

/**
 * A 503 for a request that needs the database while it cannot be reached (refused, restarting,
 * connection lost or timed out). db/database.ts throws it for every such driver error, so a
 * procedure never sees a raw connection error and the dispatcher needs no special case.
 */
export function databaseUnavailable(cause: unknown): ApiError {
  const error = new ApiError(
    "SERVICE_UNAVAILABLE",
    "The database is unavailable; try again in a few seconds",
    { dependency: "database" },
    { "Retry-After": RETRY_AFTER_SECONDS },
  );
  error.cause = cause;
  return error;
}

/** How many issues, path segments and message characters an input error lists at most. */
const MAX_ISSUES = 20;
const MAX_PATH_SEGMENTS = 12;
const MAX_MESSAGE_CHARS = 200;

/**
 * A 400 that names every failing field of a zod parse (an unknown key is named as its own
 * field), bounded so a huge or deeply nested input cannot make a huge answer.
 */
export function fromZodError(error: z.ZodError): ApiError {
  const all = error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: [...issue.path, key], message: "unknown field" }))
      : [{ path: issue.path, message: issue.message }],
  );
  const issues = all.slice(0, MAX_ISSUES).map((issue) => {
    const segments = issue.path.map(String);
    const path =
      segments.length > MAX_PATH_SEGMENTS ? [...segments.slice(0, MAX_PATH_SEGMENTS), "…"] : segments;
    return {
      path: path.join(".").slice(0, MAX_MESSAGE_CHARS) || "(input)",
      message: issue.message.slice(0, MAX_MESSAGE_CHARS),
    };
  });
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join("; ");
  const more = all.length - issues.length;
  return new ApiError("BAD_REQUEST", `Invalid input: ${summary}${more > 0 ? `; and ${more} more` : ""}`, {
    fields: [...new Set(issues.map((i) => i.path))],
    issues,
    ...(more > 0 ? { moreIssues: more } : {}),
  });
}
