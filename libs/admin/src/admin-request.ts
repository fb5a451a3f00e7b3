import { BadRequestException } from '@nestjs/common';

// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A required free-text body field: a non-blank string of at most `max` characters without NUL, other control characters
 * (but tab and newlines) or lone surrogates; else a 400 naming the field.
 */
export function textField(field: string, value: unknown, what: string, max = 1000): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max)
    throw new BadRequestException({ message: `${field} must be a non-blank string of at most ${max} characters: ${what}`, field });
  if (CONTROL.test(value) || LONE_SURROGATE.test(value))
    throw new BadRequestException({ message: `${field} must not contain NUL, other control characters or lone surrogates`, field });
  return value;
}
