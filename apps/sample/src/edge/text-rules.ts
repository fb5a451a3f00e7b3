/** C0/C1 controls except tab, line feed and carriage return (allowed in free text such as a goal). */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `value` is not acceptable free text (non-blank, no NUL or other control characters but tab and newlines, no lone
 * surrogates), or undefined.
 */
export function textProblem(value: string): string | undefined {
  if (value.trim() === '') return 'must not be blank';
  if (CONTROL_IN_TEXT.test(value)) return 'must not contain NUL or other control characters';
  if (LONE_SURROGATE.test(value)) return 'must not contain lone surrogates';
  return undefined;
}
