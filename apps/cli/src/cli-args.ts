import { scopeIdProblem } from '@zmodu/core';
import { UsageError } from './cli-config';

export interface ParsedArgs {
  readonly positional: string[];
  readonly flags: Map<string, string | true>;
}

/** `--name value` and `--flag` (boolean) options; anything unknown is a usage error. */
export function parseArgs(argv: string[], valued: readonly string[], booleans: readonly string[] = ['--help']): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const [name, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (booleans.includes(name)) flags.set(name, true);
    else if (valued.includes(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined || (inline === undefined && value.startsWith('--'))) throw new UsageError(`${name} needs a value`);
      flags.set(name, value);
    } else throw new UsageError(`unknown option ${name}`);
  }
  return { positional, flags };
}

export function flag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

/**
 * A `--tenant` or `--user` flag: absent, or an id under the rule of every door (scopeIdProblem of @zmodu/guard: no
 * control, format or invisible character, NFC, not '0', ...); anything else is a usage error naming the flag.
 */
export function idFlag(args: ParsedArgs, name: '--tenant' | '--user'): string | undefined {
  const v = flag(args, name);
  const problem = v === undefined ? null : scopeIdProblem(name, v);
  if (problem) throw new UsageError(problem);
  return v;
}
