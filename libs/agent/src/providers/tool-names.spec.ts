import fc from 'fast-check';
import { SKILL_NAME_MAX_LENGTH, SKILL_NAME_PATTERN } from '@zmodu/skills/internal';
import { fromFunctionName, toFunctionName } from './tool-names';

/** The function-name rule of OpenAI and Anthropic tools. */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Any valid skill name: lower-case segments of [a-z0-9_] joined by dots, at most 64 characters. */
const skillName = fc
  .array(fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/), { minLength: 1, maxLength: 6 })
  .map((segments) => segments.join('.'))
  .filter((name) => name.length <= SKILL_NAME_MAX_LENGTH);

describe('skill names as model tool names', () => {
  it('round-trips every valid skill name to a valid function name', () => {
    fc.assert(
      fc.property(skillName, (name) => {
        expect(SKILL_NAME_PATTERN.test(name)).toBe(true);
        expect(toFunctionName(name)).toMatch(FUNCTION_NAME);
        expect(fromFunctionName(toFunctionName(name))).toBe(name);
      }),
    );
  });

  it('never maps two different skill names to one function name (names differing only in . and _ included)', () => {
    fc.assert(
      fc.property(skillName, skillName, (a, b) => {
        if (a !== b) expect(toFunctionName(a)).not.toBe(toFunctionName(b));
      }),
    );
    const swapped = fc.sample(skillName, 200).filter((n) => n.includes('.'));
    for (const name of swapped) expect(toFunctionName(name.replace(/\./g, '_'))).not.toBe(toFunctionName(name));
  });
});
