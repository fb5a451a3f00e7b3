import { Body, Controller, Get, Param, Put, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from './swagger-decorators';
import { Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import type { Response } from 'express';
import { AdminCaller } from './admin.options';
import { AdminConfig, ConfigSetResult } from './config/admin-config.service';
import type { ConfigKeyView } from './config/admin-config.types';
import { ConfigWriteBody, ParseConfigWriteBodyPipe } from './config/config-body.pipe';
import { CONFIG_RETRY_AFTER_SECONDS, configHttpException } from './config/config-http';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

const SET_SKILL = 'admin.config.set';

const VIEW_SCHEMA = {
  type: 'object',
  properties: {
    key: { type: 'string' },
    value: { description: "The tenant's value, else the declared default, else null" },
    version: { type: 'integer', description: '0 when the tenant never set it' },
    source: { type: 'string', enum: ['stored', 'default'] },
    mutable: { type: 'boolean' },
    type: { description: "'number', 'integer', 'string', 'boolean' or a JSON Schema" },
    description: { type: 'string', nullable: true },
    updatedAt: { type: 'string', format: 'date-time', nullable: true },
    updatedBy: { type: 'string', nullable: true },
  },
};

/**
 * The declared config keys of the caller's tenant (AdminSkillsModule's `config.keys`): `GET /admin/config` lists them
 * with their values and versions; `PUT /admin/config/:key` changes one through SkillDispatcher.dispatch of
 * admin.config.set (guard, permission, type check, version, audit with the previous value), like an agent's call.
 * The permission is the `configPermission` option (default 'admin:config'); the skill checks its own as well.
 */
@ApiTags('admin')
@Controller('admin/config')
@RequireAdminPermission('configPermission')
@ApiUnauthorizedResponse({ description: 'No authenticated caller with a tenant' })
@ApiForbiddenResponse({ description: 'The caller lacks the config permission' })
export class ConfigController {
  constructor(
    private readonly config: AdminConfig,
    private readonly dispatcher: SkillDispatcher,
  ) {}

  @Get()
  @ApiOperation({ summary: "List the declared config keys with the caller's tenant's values and versions" })
  @ApiOkResponse({ schema: { type: 'object', properties: { keys: { type: 'array', items: VIEW_SCHEMA } } } })
  async list(@CurrentCaller() caller: AdminCaller): Promise<{ keys: ConfigKeyView[] }> {
    return { keys: await this.config.list(caller.tenantId) };
  }

  @Put(':key')
  @ApiOperation({
    summary: "Change a mutable declared config key of the caller's tenant",
    description:
      'Runs the admin.config.set skill through SkillDispatcher.dispatch (audited with the previous value). Send expectedVersion, the version you read, so the change applies only to that value.',
  })
  @ApiParam({ name: 'key', description: 'A declared config key, e.g. orders.maxDraft' })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['value'],
      properties: {
        value: { description: "The new value (JSON, of the key's type)" },
        expectedVersion: { type: 'integer', minimum: 0, description: 'The version read (0: no stored value yet)' },
      },
    },
  })
  @ApiOkResponse({
    description: 'The value written, its new version, and the previous value',
    schema: {
      type: 'object',
      properties: {
        key: { type: 'string' },
        value: {},
        version: { type: 'integer' },
        previous: { type: 'object', nullable: true, properties: { value: {}, version: { type: 'integer' } } },
        updatedAt: { type: 'string', format: 'date-time' },
        updatedBy: { type: 'string', nullable: true },
      },
    },
  })
  @ApiBadRequestResponse({ description: "A body that is not { value, expectedVersion? }, or a value that does not fit the key's type" })
  @ApiNotFoundResponse({ description: 'The key is not declared' })
  @ApiForbiddenResponse({ description: 'The key is read-only, or the caller lacks the permission of admin.config.set' })
  @ApiConflictResponse({ description: 'expectedVersion is not the current version: nothing was written (the body has currentVersion)' })
  @ApiServiceUnavailableResponse({
    description: 'The config store (database) cannot be reached: nothing was written; retry after Retry-After',
  })
  async set(
    @CurrentCaller() caller: AdminCaller,
    @Param('key') key: string,
    @Body(ParseConfigWriteBodyPipe) body: ConfigWriteBody,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ConfigSetResult> {
    // One path for every write: the same skill an admin agent calls, under a guard that allows exactly it.
    const ctx = createSkillContext({
      guard: new Guard({ allow: [SET_SKILL], allowExecute: true }),
      tenantId: caller.tenantId,
      userId: caller.userId,
      permissions: caller.permissions,
    });
    const result = await this.dispatcher.dispatch(ctx, SET_SKILL, { key, ...body });
    if (!result.ok) {
      const http = configHttpException(result);
      if (http.getStatus() === 503) res.setHeader('Retry-After', String(CONFIG_RETRY_AFTER_SECONDS));
      throw http;
    }
    return result.value as ConfigSetResult;
  }
}
