// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A caller's string (a body key, an id in the path) as a message may show it: at most 64 characters, control
 * characters and lone surrogates as U+FFFD.
 */
export function printable(value: string): string {
  const cut = value.length > 64 ? `${value.slice(0, 64)}...` : value;
  return cut.replace(UNPRINTABLE, '\ufffd');
}
