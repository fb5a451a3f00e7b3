import { SetMetadata } from '@nestjs/common';
import { IS_PUBLIC, REQUIRED_PERMISSIONS } from './auth.constants';

/** The caller's token must carry every one of these permission codes, or the request is answered 403. */
export const RequirePermission = (...permissions: string[]) => {
  if (permissions.length === 0 || permissions.some((p) => typeof p !== 'string' || p === ''))
    throw new TypeError('@RequirePermission needs one or more non-empty permission codes.');
  return SetMetadata(REQUIRED_PERMISSIONS, permissions);
};

/** No bearer token needed (health checks). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
