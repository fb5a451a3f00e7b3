import { ActionClass } from '@zmodu/guard';
import { JsonSchema } from './json-schema';
import { RegisteredSkill } from './skill-definition';
import { SkillRegistry } from './skill.registry';

/** One skill in the catalog: what a model, a gateway or a reviewer needs to know of it. */
export interface SkillsJsonEntry {
  readonly name: string;
  readonly description: string;
  readonly action: ActionClass;
  readonly requiredPermission: string | null;
  readonly tenantScoped: boolean;
  readonly timeoutMs: number;
  readonly parameters: JsonSchema;
}

export interface OpenApiOptions {
  readonly title?: string;
  readonly version?: string;
  /** Path prefix of the skill endpoints. Default '/skills'. */
  readonly basePath?: string;
  readonly serverUrl?: string;
}

type Catalog = SkillRegistry | readonly RegisteredSkill[];

function skillsOf(catalog: Catalog): RegisteredSkill[] {
  const list = catalog instanceof SkillRegistry ? catalog.definitions() : [...catalog];
  return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The catalog as skills JSON (the spec's toSkillsJson): name, description, action, permission, JSON Schema. */
export function toSkillsJson(catalog: Catalog): SkillsJsonEntry[] {
  return skillsOf(catalog).map((s) => ({
    name: s.name,
    description: s.description,
    action: s.action,
    requiredPermission: s.requiredPermission ?? null,
    tenantScoped: s.tenantScoped,
    timeoutMs: s.timeoutMs,
    parameters: s.parameters,
  }));
}

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'reason'],
  properties: {
    error: {
      type: 'string',
      description: 'ToolDenied, PermissionDenied, InvalidArguments, TenantRequired, Timeout, SkillFailed, or a skill-specific code',
    },
    reason: { type: 'string' },
    message: { type: 'string' },
  },
} as const;

/**
 * The catalog as an OpenAPI 3.1 document (the spec's toOpenApi): one POST operation per skill,
 * whose request body is the skill's argument schema, behind a bearer token.
 */
export function toOpenApi(catalog: Catalog, options: OpenApiOptions = {}): Record<string, unknown> {
  const base = (options.basePath ?? '/skills').replace(/\/$/, '');
  const paths: Record<string, unknown> = {};
  for (const s of skillsOf(catalog)) {
    paths[`${base}/${s.name}`] = {
      post: {
        operationId: s.name.replace(/[^A-Za-z0-9_]/g, '_'),
        summary: s.description.split(/(?<=\.)\s/)[0],
        description: s.description,
        tags: [s.action],
        'x-zmodu-action': s.action,
        'x-zmodu-required-permission': s.requiredPermission ?? null,
        'x-zmodu-tenant-scoped': s.tenantScoped,
        requestBody: { required: true, content: { 'application/json': { schema: s.parameters } } },
        responses: {
          '200': { description: 'The skill value, as JSON', content: { 'application/json': { schema: {} } } },
          '400': {
            description: 'Invalid arguments',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/SkillError' } } },
          },
          '403': {
            description: 'Refused by the guard or for a missing permission',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/SkillError' } } },
          },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: options.title ?? 'zmodu skills', version: options.version ?? '1.0.0' },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: { SkillError: ERROR_SCHEMA },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
