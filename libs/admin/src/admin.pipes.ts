import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform } from '@nestjs/common';
import { textField } from './admin-request';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID path parameter; anything else is a 400 naming the parameter (`{ message, field }`). */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    const field = metadata.data ?? 'id';
    if (typeof value !== 'string' || !UUID.test(value)) throw new BadRequestException({ message: `${field} must be a UUID`, field });
    return value;
  }
}

/** An optional whole-number query parameter from `min` to `max`; anything else is a 400 naming it. */
export class OptionalIntPipe implements PipeTransform<string | undefined, number | undefined> {
  constructor(
    private readonly min = 1,
    private readonly max = 1_000_000,
  ) {}

  transform(value: string | undefined, metadata: ArgumentMetadata): number | undefined {
    if (value === undefined || value === '') return undefined;
    const field = metadata.data ?? 'value';
    const n = Number(value);
    if (typeof value !== 'string' || !/^\d{1,7}$/.test(value) || n < this.min || n > this.max)
      throw new BadRequestException({ message: `${field} must be a whole number from ${this.min} to ${this.max}`, field });
    return n;
  }
}

/** An optional query parameter that must be one of `values`; anything else is a 400 naming it. */
export class OptionalOneOfPipe<T extends string> implements PipeTransform<string | undefined, T | undefined> {
  constructor(private readonly values: readonly T[]) {}

  transform(value: string | undefined, metadata: ArgumentMetadata): T | undefined {
    if (value === undefined) return undefined;
    const field = metadata.data ?? 'value';
    if (!this.values.includes(value as T))
      throw new BadRequestException({ message: `${field} must be one of ${this.values.join(', ')}`, field });
    return value as T;
  }
}

// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const QUERY_CONTROL = /[\u0000-\u001f\u007f]/;

/** An optional query parameter naming something (an agent, a skill): a non-blank string of at most `max` characters without control characters. */
export class OptionalNamePipe implements PipeTransform<unknown, string | undefined> {
  constructor(private readonly max = 200) {}

  transform(value: unknown, metadata: ArgumentMetadata): string | undefined {
    if (value === undefined) return undefined;
    const field = metadata.data ?? 'value';
    if (typeof value !== 'string' || value.trim() === '' || value.length > this.max || QUERY_CONTROL.test(value))
      throw new BadRequestException({
        message: `${field} must be given once, as a non-blank name of at most ${this.max} characters without control characters`,
        field,
      });
    return value;
  }
}

/** The body of a decision: `{ reason, version, step, payload? }`, each checked; a 400 names the field. */
export interface DecisionBody {
  readonly reason: string;
  readonly version: number;
  readonly step: number;
  readonly payload?: unknown;
}

/** Parses the body of POST /admin/approvals/:id/approve and /reject. */
@Injectable()
export class ParseDecisionBodyPipe implements PipeTransform<unknown, DecisionBody> {
  transform(body: unknown): DecisionBody {
    const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as {
      reason?: unknown;
      version?: unknown;
      step?: unknown;
      payload?: unknown;
    };
    const reason = textField('reason', b.reason, 'say why');
    if (typeof b.version !== 'number')
      throw new BadRequestException({
        message: 'version must be the version of the proposal you read (GET /admin/approvals/:id answers it)',
        field: 'version',
      });
    if (typeof b.step !== 'number')
      throw new BadRequestException({
        message: 'step must be the index of the step you decide (waitingStep.index of the proposal you read)',
        field: 'step',
      });
    return { reason, version: b.version, step: b.step, ...(b.payload !== undefined ? { payload: b.payload } : {}) };
  }
}

/** The body of POST /admin/approvals/:id/preview: the version read and the edited payload. */
export interface PreviewBody {
  readonly version: number;
  readonly payload: unknown;
}

/** `{ version, payload }` present (their values are checked by the pipeline, which names a wrong one). */
export class ParsePreviewBodyPipe implements PipeTransform<unknown, PreviewBody> {
  transform(body: unknown): PreviewBody {
    const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as { version?: unknown; payload?: unknown };
    if (typeof b.version !== 'number')
      throw new BadRequestException({
        message: 'version must be the version of the proposal you read (GET /admin/approvals/:id answers it)',
        field: 'version',
      });
    if (b.payload === undefined)
      throw new BadRequestException({ message: 'payload is required: the edited payload to preview', field: 'payload' });
    return { version: b.version, payload: b.payload };
  }
}
