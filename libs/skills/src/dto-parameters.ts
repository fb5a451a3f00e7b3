import { loadOptionalPeer } from '@zmodu/core';
import type { JsonSchema } from './json-schema';
import type { StandardParameters, StandardSchemaIssue } from './standard-schema';

/** A class-validator DTO class as a skill's parameters: `parameters: DraftOrderDto`. */
export type DtoClass<T extends object = object> = new (...args: never[]) => T;

const INSTALL = 'class-validator@^0.15.0 class-transformer@^0.5.1';
const FEATURE = 'a DTO class as skill parameters';

/** What of class-validator we use. */
interface ClassValidator {
  getMetadataStorage(): {
    getTargetValidationMetadatas(
      target: DtoClass,
      schema: string,
      always: boolean,
      strictGroups: boolean,
    ): Array<{ propertyName: string; type: string; name?: string; constraints?: unknown[]; each?: boolean }>;
  };
  validate(object: object, options: Record<string, unknown>): Promise<ValidationError[]>;
}
interface ValidationError {
  property: string;
  constraints?: Record<string, string>;
  children?: ValidationError[];
}
interface ClassTransformer {
  plainToInstance(cls: DtoClass, plain: unknown): object;
}
interface TypeMetadataStorage {
  findTypeMetadata(target: DtoClass, property: string): { typeFunction?: () => unknown } | undefined;
}

/** The decorators whose rule can be told as JSON Schema; any other is refused at boot (the model must see the rule). */
const SUPPORTED =
  '@IsString, @IsInt, @IsNumber, @IsBoolean, @IsEnum, @IsIn, @IsUUID, @IsEmail, @IsOptional, @IsDefined, @IsNotEmpty, ' +
  '@Min, @Max, @IsPositive, @MinLength, @MaxLength, @Length, @Matches (no flags), @IsArray, @ArrayMinSize, @ArrayMaxSize, ' +
  '@ArrayNotEmpty, @ValidateNested with @Type(() => Class)';
const MAX_DTO_DEPTH = 8;

/** Whether `value` is a class (a DTO): the one kind of parameters that is a function. */
export function isDtoClass(value: unknown): value is DtoClass {
  return typeof value === 'function' && typeof (value as { prototype?: unknown }).prototype === 'object';
}

/**
 * A DTO class of class-validator as a Standard Schema: its JSON Schema is made from its decorators (the model sees
 * exactly its fields: additionalProperties false), and `validate` is class-transformer's plainToInstance and
 * class-validator's validate (whitelist, forbidNonWhitelisted): the handler receives the DTO instance. class-validator
 * and class-transformer are optional peers of @zmodu/skills, loaded here, at boot.
 */
export function dtoParameters(dto: DtoClass): StandardParameters {
  /* eslint-disable @typescript-eslint/no-require-imports -- optional peers, loaded when a DTO is declared */
  const validator = loadOptionalPeer<ClassValidator>('class-validator', FEATURE, () => require('class-validator') as ClassValidator, {
    install: INSTALL,
  });
  const transformer = loadOptionalPeer<ClassTransformer>(
    'class-transformer',
    FEATURE,
    () => require('class-transformer') as ClassTransformer,
    { install: INSTALL },
  );
  const types = loadOptionalPeer<{ defaultMetadataStorage: TypeMetadataStorage }>(
    'class-transformer',
    FEATURE,
    () => require('class-transformer/cjs/storage') as { defaultMetadataStorage: TypeMetadataStorage },
    { install: INSTALL },
  ).defaultMetadataStorage;
  /* eslint-enable @typescript-eslint/no-require-imports */
  return {
    '~standard': {
      version: 1,
      vendor: 'class-validator',
      validate: async (value: unknown) => {
        const instance = transformer.plainToInstance(dto, value);
        const errors = await validator.validate(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
        return errors.length ? { issues: issuesOf(errors, []) } : { value: instance };
      },
      jsonSchema: { input: () => dtoSchema(dto, validator, types, [], 0) as Record<string, unknown> },
    },
  };
}

function issuesOf(errors: readonly ValidationError[], path: readonly string[]): StandardSchemaIssue[] {
  return errors.flatMap((e) => [
    ...Object.values(e.constraints ?? {}).map((message) => ({ message, path: [...path, e.property] })),
    ...issuesOf(e.children ?? [], [...path, e.property]),
  ]);
}

function dtoSchema(dto: DtoClass, validator: ClassValidator, types: TypeMetadataStorage, stack: DtoClass[], depth: number): JsonSchema {
  if (stack.includes(dto))
    throw new Error(`${dto.name} refers to itself (through ${stack.map((c) => c.name).join(' > ')}): a DTO must be a tree`);
  if (depth > MAX_DTO_DEPTH) throw new Error(`DTOs nest deeper than ${MAX_DTO_DEPTH} levels`);
  const metadatas = validator.getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const byProperty = new Map<string, typeof metadatas>();
  for (const m of metadatas) byProperty.set(m.propertyName, [...(byProperty.get(m.propertyName) ?? []), m]);
  if (byProperty.size === 0) throw new Error(`${dto.name} has no class-validator decorators: declare each field (${SUPPORTED})`);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [property, metas] of byProperty) {
    const where = `${dto.name}.${property}`;
    let optional = false;
    let array = false;
    const item: Record<string, unknown> = {};
    const list: Record<string, unknown> = {};
    const typed = (schema: Record<string, unknown>) => {
      if (item.type !== undefined || item.enum !== undefined)
        throw new Error(`${where} has more than one type decorator: keep one of them`);
      Object.assign(item, schema);
    };
    for (const m of metas) {
      const c = m.constraints ?? [];
      const name = m.type === 'nestedValidation' ? 'validateNested' : m.name;
      // A value rule (min, maxLength, pattern, ...) is of the value, or of each item (`each: true`) of an array.
      const target = item;
      switch (name) {
        case 'isOptional':
          optional = true;
          break;
        case 'isDefined':
          break;
        case 'isString':
          typed({ type: 'string' });
          break;
        case 'isInt':
          typed({ type: 'integer' });
          break;
        case 'isNumber':
          typed({ type: 'number' });
          break;
        case 'isBoolean':
          typed({ type: 'boolean' });
          break;
        case 'isUUID':
          typed({ type: 'string', format: 'uuid' });
          break;
        case 'isEmail':
          typed({ type: 'string', format: 'email' });
          break;
        case 'isEnum': {
          const values = Array.isArray(c[1]) ? c[1] : enumValues(c[0]);
          typed({ enum: values });
          break;
        }
        case 'isIn':
          typed({ enum: [...(c[0] as unknown[])] });
          break;
        case 'validateNested': {
          const nested = types.findTypeMetadata(dto, property)?.typeFunction?.();
          if (!isDtoClass(nested)) throw new Error(`${where} is @ValidateNested without @Type(() => Class): name its class`);
          typed(dtoSchema(nested, validator, types, [...stack, dto], depth + 1) as Record<string, unknown>);
          break;
        }
        case 'isArray':
          array = true;
          break;
        case 'min':
          target.minimum = c[0];
          break;
        case 'max':
          target.maximum = c[0];
          break;
        case 'isPositive':
          target.exclusiveMinimum = 0;
          break;
        case 'minLength':
          target.minLength = c[0];
          break;
        case 'maxLength':
          target.maxLength = c[0];
          break;
        case 'isNotEmpty':
          target.minLength = Math.max(1, Number(target.minLength ?? 0));
          break;
        case 'length':
          target.minLength = c[0];
          if (c[1] !== undefined) target.maxLength = c[1];
          break;
        case 'matches': {
          const re = c[0] instanceof RegExp ? c[0] : new RegExp(String(c[0]), typeof c[1] === 'string' ? c[1] : '');
          if (re.flags.replace(/[gu]/g, ''))
            throw new Error(`${where} is @Matches with flags (${re.flags}), which JSON Schema cannot say: write them into the pattern`);
          target.pattern = re.source;
          break;
        }
        case 'arrayMinSize':
          list.minItems = c[0];
          break;
        case 'arrayMaxSize':
          list.maxItems = c[0];
          break;
        case 'arrayNotEmpty':
          list.minItems = Math.max(1, Number(list.minItems ?? 0));
          break;
        default:
          throw new Error(
            `${where} uses the class-validator rule '${name ?? m.type}', which cannot be told to the model as JSON Schema. Use ${SUPPORTED}, or give parameters as a Standard Schema or JSON Schema`,
          );
      }
    }
    if (item.type === undefined && item.enum === undefined)
      throw new Error(
        `${where} has no type: declare it (@IsString, @IsInt, @IsNumber, @IsBoolean, @IsEnum, @IsIn, or @ValidateNested with @Type)`,
      );
    const each = metas.some((m) => m.each === true);
    if ((each || Object.keys(list).length > 0) && !array) array = true;
    properties[property] = (array ? { type: 'array', items: item, ...list } : item) as JsonSchema;
    if (!optional) required.push(property);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false } as JsonSchema;
}

/** The values of a TypeScript enum object (a numeric enum's reverse entries left out). */
function enumValues(enumObject: unknown): unknown[] {
  const entries = Object.entries((enumObject ?? {}) as Record<string, unknown>);
  return entries.filter(([key]) => !/^\d+$/.test(key)).map(([, value]) => value);
}
