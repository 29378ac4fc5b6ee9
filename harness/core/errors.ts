/** Errors with stable codes: the CLI turns them into a message and an exit code in one place. */

export type ErrorCode =
  | 'INVALID_SCENARIO'
  | 'INVALID_ARGUMENT'
  | 'NOT_SUPPORTED'
  | 'OUTPUT_EXISTS'
  | 'UNKNOWN_STRATEGY'
  | 'UNKNOWN_SCENARIO'
  | 'MODEL_ERROR';

/** Exit code 2 means "bad input": the user can fix the command or the file. */
const BAD_INPUT: ReadonlySet<ErrorCode> = new Set([
  'INVALID_SCENARIO',
  'INVALID_ARGUMENT',
  'NOT_SUPPORTED',
  'OUTPUT_EXISTS',
  'UNKNOWN_STRATEGY',
  'UNKNOWN_SCENARIO',
]);

/** An expected failure with a message meant for the user (no stack trace shown). */
export class MembenchError extends Error {
  readonly code: ErrorCode;
  /** Extra lines printed under the message (e.g. one per problem in a file). */
  readonly details: readonly string[];

  constructor(code: ErrorCode, message: string, details: readonly string[] = []) {
    super(message);
    this.name = 'MembenchError';
    this.code = code;
    this.details = details;
  }

  get exitCode(): number {
    return BAD_INPUT.has(this.code) ? 2 : 1;
  }
}

export function isMembenchError(error: unknown): error is MembenchError {
  return error instanceof MembenchError;
}
