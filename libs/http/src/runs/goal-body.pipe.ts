import {
  BadRequestException,
  createParamDecorator,
  ExecutionContext,
  Inject,
  Injectable,
  PipeTransform,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { ZMODU_HTTP_OPTIONS } from '../http.constants';
import { GOAL_BODY_FIELD_MESSAGE, GOAL_BODY_MESSAGE, GOAL_BODY_MEDIA_TYPE_MESSAGE } from '../http.messages';
import { printable } from '../printable';
import type { ResolvedHttpOptions } from '../zmodu-http.options';

/** The body of POST /agents/:name/runs and /goals. */
export interface RunGoalBody {
  readonly goal: string;
}

/** C0/C1 controls except tab, line feed and carriage return (allowed in free text such as a goal). */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `value` is not acceptable free text (non-blank, no NUL or other control characters but tab and newlines, no
 * lone surrogates), or undefined.
 */
export function textProblem(value: string): string | undefined {
  if (value.trim() === '') return 'must not be blank';
  if (CONTROL_IN_TEXT.test(value)) return 'must not contain NUL or other control characters';
  if (LONE_SURROGATE.test(value)) return 'must not contain lone surrogates';
  return undefined;
}

/** Why a run's goal cannot be run, or undefined: a string of 1 to `max` characters, free text (textProblem). */
export function goalProblem(goal: unknown, max: number): string | undefined {
  if (typeof goal !== 'string') return goal === undefined ? 'goal is missing: send { "goal": "..." }' : 'goal must be a string';
  if (goal.length > max) return `goal must be shorter than or equal to ${max} characters`;
  const problem = textProblem(goal);
  return problem ? `goal ${problem}` : undefined;
}

/**
 * Checks the body of a run before anything runs: a JSON object with exactly a `goal` (a 400 naming the field
 * otherwise). The tenant, the user and the permissions are never taken from it: a body that names them is refused.
 */
@Injectable()
export class RunGoalPipe implements PipeTransform<unknown, RunGoalBody> {
  constructor(@Inject(ZMODU_HTTP_OPTIONS) private readonly options: ResolvedHttpOptions) {}

  transform(body: unknown): RunGoalBody {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new BadRequestException({ statusCode: 400, message: GOAL_BODY_MESSAGE, field: 'body' });
    const extra = Object.keys(body).find((key) => key !== 'goal');
    if (extra !== undefined) {
      const field = printable(extra);
      throw new BadRequestException({ statusCode: 400, message: GOAL_BODY_FIELD_MESSAGE(field), field });
    }
    const goal = Object.hasOwn(body, 'goal') ? (body as { goal?: unknown }).goal : undefined;
    const problem = goalProblem(goal, this.options.maxGoalLength);
    if (problem) throw new BadRequestException({ statusCode: 400, message: problem, field: 'goal' });
    return { goal: goal as string };
  }
}

/** Whether a Content-Type names JSON (`application/json` or a `+json` type, any parameters). */
export function isJsonContentType(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const type = value.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * `@JsonGoalBody(RunGoalPipe)`: the request's body, only when it came as JSON (else 415). A form or text/plain body is
 * what a cross-site HTML form can send without a CORS preflight: a run is never started by one.
 */
export const JsonGoalBody = createParamDecorator((_: unknown, context: ExecutionContext): unknown => {
  const req = context.switchToHttp().getRequest<{ headers?: Record<string, unknown>; body?: unknown }>();
  if (!isJsonContentType(req.headers?.['content-type']))
    throw new UnsupportedMediaTypeException({ statusCode: 415, message: GOAL_BODY_MEDIA_TYPE_MESSAGE, field: 'body' });
  return req.body;
});
