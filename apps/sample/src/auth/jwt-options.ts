import type { JwtModuleOptions } from '@nestjs/jwt';

/** How the sample signs and verifies bearer tokens: HS256 with the given secret, nothing else accepted. */
export function jwtModuleOptions(secret: string): JwtModuleOptions {
  return { secret, signOptions: { algorithm: 'HS256' }, verifyOptions: { algorithms: ['HS256'] } };
}
