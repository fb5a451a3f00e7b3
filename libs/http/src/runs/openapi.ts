import { applyDecorators } from '@nestjs/common';
import type * as Swagger from '@nestjs/swagger';

/** @nestjs/swagger when the application has it (an optional peer of @zmodu/http), else null. */
const swagger: typeof Swagger | null = (() => {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- optional: the runs controller works without it
    return require('@nestjs/swagger') as typeof Swagger;
  } catch {
    return null;
  }
})();

/**
 * The OpenAPI decorators of a route or a controller, applied when @nestjs/swagger is installed (so the routes show in
 * the application's document with their answers and the bearer scheme), and nothing when it is not.
 */
export function OpenApi(...decorators: Array<(api: typeof Swagger) => ClassDecorator | MethodDecorator>): ClassDecorator & MethodDecorator {
  return applyDecorators(...(swagger ? decorators.map((make) => make(swagger) as ClassDecorator & MethodDecorator) : []));
}
