import type * as Swagger from '@nestjs/swagger';
import { tryLoadOptionalPeer } from '@zmodu/core';

/**
 * The @nestjs/swagger decorators of the admin controllers, from this one module: @nestjs/swagger's own when the
 * application has it installed (it is an optional peer of @zmodu/admin), no-ops when it does not, so that the
 * admin endpoints work the same without it; only an application that builds an OpenAPI document needs it, and
 * then the document describes the admin API (tags, summaries, parameters, bodies, answers, the bearer scheme).
 * Loaded when @zmodu/admin is imported, since decorators run when a class is defined. Only its types are
 * imported at the top of this file.
 */
const swagger = tryLoadOptionalPeer(
  '@nestjs/swagger',
  'the OpenAPI decorators of the admin controllers',
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  () => require('@nestjs/swagger') as typeof Swagger,
);

/** Whether the decorators are @nestjs/swagger's (true) or no-ops (false: it is not installed). */
export const SWAGGER_DECORATORS = swagger !== undefined;

/** A decorator factory that records nothing: the stand-in for one of @nestjs/swagger's. */
const noop = (() => () => undefined) as unknown;

type Decorators = Pick<
  typeof Swagger,
  | 'ApiBadRequestResponse'
  | 'ApiBearerAuth'
  | 'ApiBody'
  | 'ApiConflictResponse'
  | 'ApiForbiddenResponse'
  | 'ApiNotFoundResponse'
  | 'ApiNotImplementedResponse'
  | 'ApiOkResponse'
  | 'ApiOperation'
  | 'ApiParam'
  | 'ApiProduces'
  | 'ApiQuery'
  | 'ApiServiceUnavailableResponse'
  | 'ApiTags'
  | 'ApiUnauthorizedResponse'
  | 'ApiUnprocessableEntityResponse'
>;

// Own members of the loaded module only (a missing one, in an older @nestjs/swagger, is a no-op like the rest).
const pick = <K extends keyof Decorators>(name: K): Decorators[K] =>
  swagger && Object.hasOwn(swagger, name) ? (swagger as Decorators)[name] : (noop as Decorators[K]);

export const ApiBadRequestResponse = pick('ApiBadRequestResponse');
export const ApiBearerAuth = pick('ApiBearerAuth');
export const ApiBody = pick('ApiBody');
export const ApiConflictResponse = pick('ApiConflictResponse');
export const ApiForbiddenResponse = pick('ApiForbiddenResponse');
export const ApiNotFoundResponse = pick('ApiNotFoundResponse');
export const ApiNotImplementedResponse = pick('ApiNotImplementedResponse');
export const ApiOkResponse = pick('ApiOkResponse');
export const ApiOperation = pick('ApiOperation');
export const ApiParam = pick('ApiParam');
export const ApiProduces = pick('ApiProduces');
export const ApiQuery = pick('ApiQuery');
export const ApiServiceUnavailableResponse = pick('ApiServiceUnavailableResponse');
export const ApiTags = pick('ApiTags');
export const ApiUnauthorizedResponse = pick('ApiUnauthorizedResponse');
export const ApiUnprocessableEntityResponse = pick('ApiUnprocessableEntityResponse');

export type { SchemaObject } from '@nestjs/swagger';
