import { JwtService } from '@nestjs/jwt';
import { ALL_PERMISSIONS } from './auth.constants';

export interface DevTokenClaims {
  readonly tenant: string;
  readonly user: string;
  readonly permissions?: readonly string[];
  readonly expiresIn?: string;
  /** The "aud" claim: the resource the token is for (the MCP endpoint's resource identifier, when it checks it). */
  readonly audience?: string;
}

/** Mint an HS256 token for local development and tests. */
export function mintToken(secret: string, claims: DevTokenClaims): string {
  return new JwtService().sign(
    { tenant: claims.tenant, permissions: [...(claims.permissions ?? ALL_PERMISSIONS)] },
    {
      secret,
      algorithm: 'HS256',
      subject: claims.user,
      expiresIn: (claims.expiresIn ?? '1h') as never,
      ...(claims.audience !== undefined ? { audience: claims.audience } : {}),
    },
  );
}
