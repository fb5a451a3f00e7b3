import { applyDecorators } from '@nestjs/common';
import type * as Swagger from '@nestjs/swagger';
import { tryLoadOptionalPeer } from '@zmodu/core';

/**
 * @nestjs/swagger when the application has it (an optional peer of @zmodu/http), else undefined. Loaded when
 * @zmodu/http is imported, since decorators run when a class is defined; only its types are imported above.
 */
const swagger = tryLoadOptionalPeer(
  '@nestjs/swagger',
  'the OpenAPI decorators of the runs controller',
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  () => require('@nestjs/swagger') as typeof Swagger,
);

/**
 * The OpenAPI decorators of a route or a controller, applied when @nestjs/swagger is installed (so the routes show in
 * the application's document with their answers and the bearer scheme), and nothing when it is not.
 */
export function OpenApi(...decorators: Array<(api: typeof Swagger) => ClassDecorator | MethodDecorator>): ClassDecorator & MethodDecorator {
  return applyDecorators(...(swagger ? decorators.map((make) => make(swagger) as ClassDecorator & MethodDecorator) : []));
}
