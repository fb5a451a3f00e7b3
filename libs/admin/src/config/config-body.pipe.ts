import { BadRequestException, PipeTransform } from '@nestjs/common';

/** The body of PUT /admin/config/:key. */
export interface ConfigWriteBody {
  readonly value: unknown;
  readonly expectedVersion?: number;
}

const FIELDS = new Set(['value', 'expectedVersion']);

/** `{ value, expectedVersion? }` (own fields only, nothing else), or a 400 naming the field. */
export class ParseConfigWriteBodyPipe implements PipeTransform<unknown, ConfigWriteBody> {
  transform(body: unknown): ConfigWriteBody {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new BadRequestException({ message: 'The body must be a JSON object { value, expectedVersion? }', field: null });
    for (const key of Object.keys(body))
      if (!FIELDS.has(key))
        throw new BadRequestException({ message: `${key} is not a field: send { value, expectedVersion? }`, field: key });
    if (!Object.hasOwn(body, 'value') || (body as { value?: unknown }).value === undefined)
      throw new BadRequestException({ message: 'value is required: the new value of the key (JSON, of its type)', field: 'value' });
    const { value, expectedVersion } = body as { value: unknown; expectedVersion?: unknown };
    if (expectedVersion !== undefined && !(Number.isSafeInteger(expectedVersion) && (expectedVersion as number) >= 0))
      throw new BadRequestException({
        message: 'expectedVersion must be a whole number >= 0: the version GET /admin/config answered (0: no stored value yet)',
        field: 'expectedVersion',
      });
    return expectedVersion === undefined ? { value } : { value, expectedVersion: expectedVersion as number };
  }
}
