import { ExecutionContext, Logger, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Redactor } from '@zmodu/guard';
import { resolveHttpOptions } from '../zmodu-http.options';
import { HttpCallerGuard } from './http-caller.guard';

const OPENAI_KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlc2lnbmF0dXJl';

function contextOf(request: object): ExecutionContext {
  const handler = () => undefined;
  return {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}), getNext: () => undefined }),
    getHandler: () => handler,
    getClass: () => class Routes {},
  } as unknown as ExecutionContext;
}

describe('HttpCallerGuard when resolveCaller throws', () => {
  afterEach(() => jest.restoreAllMocks());

  // The application's resolver may throw with the credential it could not verify in its message (a JWT library's
  // "invalid token eyJ...", an upstream's echo of a key): the 401 never shows it, and neither does the log line.
  it('answers 401 without the text, and logs the text redacted: no token or key in the log', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const options = resolveHttpOptions({
      resolveCaller: () => {
        throw new Error(`jwt malformed: ${JWT} (verified with key ${OPENAI_KEY})`);
      },
    });
    const guard = new HttpCallerGuard(new Reflector(), options, new Redactor());
    const refused = await guard.canActivate(contextOf({ headers: {} })).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UnauthorizedException);
    expect(JSON.stringify((refused as UnauthorizedException).getResponse())).not.toContain(JWT);
    const logged = warn.mock.calls.map((c) => String(c[0])).join('\n');
    expect(logged).toContain('resolveCaller threw');
    expect(logged).not.toContain(JWT);
    expect(logged).not.toContain(OPENAI_KEY);
  });

  it('redacts with a default Redactor when none is injected', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const options = resolveHttpOptions({ resolveCaller: () => Promise.reject(new Error(`bad key ${OPENAI_KEY}`)) });
    await expect(new HttpCallerGuard(new Reflector(), options).canActivate(contextOf({}))).rejects.toBeInstanceOf(UnauthorizedException);
    expect(warn.mock.calls.map((c) => String(c[0])).join('\n')).not.toContain(OPENAI_KEY);
  });
});
