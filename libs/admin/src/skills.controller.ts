import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from './swagger-decorators';
import { SkillRegistry, toOpenApi, toSkillsJson } from '@zmodu/skills';
import { SkillsJsonEntry } from '@zmodu/skills/internal';
import { ADMIN_OPTIONS } from './admin.constants';
import { OPENAPI_DOCUMENT_SCHEMA, SKILLS_JSON_SCHEMA } from './admin.openapi';
import { AdminCaller, ResolvedAdminOptions } from './admin.options';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

/**
 * The skill catalog the caller may see, as skills JSON and as an OpenAPI 3.1 document (the catalog export of
 * @zmodu/skills): a skill whose `requiredPermission` the caller lacks is left out, and so is one the `skillVisible`
 * option refuses for the caller (e.g. by tenant). The permission is the `skillsPermission` option.
 */
@ApiTags('admin: skills')
@Controller('admin/skills')
@RequireAdminPermission('skillsPermission')
export class SkillsController {
  constructor(
    private readonly registry: SkillRegistry,
    @Inject(ADMIN_OPTIONS) private readonly options: ResolvedAdminOptions,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The skills the caller may see, as skills JSON (name, description, action, permission, schema)' })
  @ApiOkResponse({ schema: SKILLS_JSON_SCHEMA })
  list(@CurrentCaller() caller: AdminCaller): SkillsJsonEntry[] {
    return this.visible(caller);
  }

  @Get('openapi.json')
  @ApiOperation({ summary: 'The skills the caller may see, as an OpenAPI 3.1 document (one POST operation per skill)' })
  @ApiOkResponse({ schema: OPENAPI_DOCUMENT_SCHEMA })
  openApi(@CurrentCaller() caller: AdminCaller): Record<string, unknown> {
    const names = new Set(this.visible(caller).map((s) => s.name));
    return toOpenApi(
      this.registry.definitions().filter((s) => names.has(s.name)),
      this.options.skillsOpenApi,
    );
  }

  private visible(caller: AdminCaller): SkillsJsonEntry[] {
    return toSkillsJson(this.registry).filter(
      (s) => (s.requiredPermission === null || caller.permissions.includes(s.requiredPermission)) && this.options.skillVisible(s, caller),
    );
  }
}
