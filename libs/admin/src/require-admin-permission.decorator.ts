import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { AdminPermissionGuard } from './admin-permission.guard';
import { ApiAdminEndpoint } from './admin.openapi';
import { ADMIN_PERMISSION } from './admin.constants';
import { AdminPermissionOption } from './admin.options';

const OPTIONS: readonly AdminPermissionOption[] = [
  'decidePermission',
  'outboxPermission',
  'auditPermission',
  'agentsPermission',
  'quotaPermission',
  'skillsPermission',
  'configPermission',
];

/**
 * The endpoint (or every endpoint of the controller) needs the permission that the admin option
 * `option` names (e.g. 'outboxPermission', 'admin:outbox' by default), checked by AdminPermissionGuard. In the OpenAPI
 * document (@nestjs/swagger), the endpoint needs the 'bearer' security scheme and answers 401 and 403.
 */
export function RequireAdminPermission(option: AdminPermissionOption): ClassDecorator & MethodDecorator {
  if (!OPTIONS.includes(option))
    throw new TypeError(`@RequireAdminPermission(${JSON.stringify(option)}): name one of the options ${OPTIONS.join(', ')}.`);
  return applyDecorators(SetMetadata(ADMIN_PERMISSION, option), UseGuards(AdminPermissionGuard), ApiAdminEndpoint(option));
}
