import { join } from 'node:path';
import * as ts from 'typescript';
import { nestProjectOptions } from '../support/markdown-code';

const ROOT = join(__dirname, '..', '..');
const FIXTURE = join(ROOT, 'test', 'fixtures', 'typed-skill-types.ts');

describe('typed skills: the types (test/fixtures/typed-skill-types.ts, compiled as a nest new project would)', () => {
  it("checks a decorated method's argument and infers defineSkill's handler argument from a Standard Schema", () => {
    const program = ts.createProgram({ rootNames: [FIXTURE], options: nestProjectOptions(ROOT) });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName === FIXTURE)
      .map((d) => {
        const line = d.start === undefined ? '?' : d.file!.getLineAndCharacterOfPosition(d.start).line + 1;
        return `${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    // The fixture's expected errors are marked @ts-expect-error: an unused mark is a problem too, so both ways fail here.
    expect(problems).toEqual([]);
  });
});
