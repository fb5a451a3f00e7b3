const CANONICAL_INTEGER = /^(0|-?[1-9][0-9]{0,18})$/;
/** numeric holds longer whole numbers; a tenant id with a fraction or an exponent has more than one spelling ('1.0', '1e0'). */
const CANONICAL_NUMERIC = /^(0|-?[1-9][0-9]{0,999})$/;
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Types that compare strings as written (a blank-padded character(n) too: trailing blanks are refused for every id). */
const STRING_TYPE = /^(text|character varying(\(\d+\))?|character(\(\d+\))?)$/;

const INTEGER_TYPE = /^(smallint|integer|bigint)$/;
const NUMERIC_TYPE = /^numeric(\(\d+(,\d+)?\))?$/;

/** Whether a tenant column of this type (format_type) has one spelling per tenant id. */
export function isTenantTypeSupported(type: string): boolean {
  return INTEGER_TYPE.test(type) || NUMERIC_TYPE.test(type) || type === 'uuid' || STRING_TYPE.test(type);
}

/**
 * Why a tenant id is not the one spelling its tenant columns read it as (undefined: it is). A tenant column
 * of any other type (citext, a float, a string type under a nondeterministic collation, ...) reads several
 * spellings as one tenant, so no id is accepted for it (the data audit names the column).
 */
export function tenantSpellingProblem(tenant: string, types: readonly string[] | undefined): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/^\s|\s$|[\u0000-\u001f\u007f-\u009f]/.test(tenant)) return 'has surrounding spaces or control characters';
  for (const type of types ?? []) {
    if (INTEGER_TYPE.test(type)) {
      if (!CANONICAL_INTEGER.test(tenant))
        return `is not a whole number written plainly (no sign but '-', no leading zeros), as the ${type} tenant column needs`;
    } else if (NUMERIC_TYPE.test(type)) {
      if (!CANONICAL_NUMERIC.test(tenant))
        return `is not a whole number written plainly (no sign but '-', no leading zeros, no fraction or exponent), as the ${type} tenant column needs`;
    } else if (type === 'uuid') {
      if (!CANONICAL_UUID.test(tenant)) return 'is not a lower-case hyphenated uuid, as the uuid tenant column needs';
    } else if (!isTenantTypeSupported(type))
      return `cannot be matched by one spelling: a tenant column is ${type}, which reads several spellings as one value (use text, varchar, an integer type or uuid)`;
  }
  return undefined;
}
