import { ConfigurableModuleBuilder } from '@nestjs/common';
import { MCP_PATH } from './mcp.constants';
import { createMcpController } from './mcp.controller';
import { DEFAULT_MCP_PATH, McpModuleExtras, McpModuleOptions } from './mcp.options';

export const {
  ConfigurableModuleClass: ConfigurableMcpModule,
  MODULE_OPTIONS_TOKEN: MCP_MODULE_OPTIONS,
  OPTIONS_TYPE: MCP_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: MCP_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<McpModuleOptions>({ moduleName: 'ZmoduMcp' })
  .setClassMethodName('forRoot')
  // The path names a route, so it is static: given beside the options, also with forRootAsync.
  .setExtras<McpModuleExtras>({ path: DEFAULT_MCP_PATH }, (definition, extras) => ({
    ...definition,
    controllers: [...(definition.controllers ?? []), createMcpController(extras.path)],
    providers: [...(definition.providers ?? []), { provide: MCP_PATH, useValue: extras.path }],
  }))
  .build();

/** What `McpModule.forRoot` takes: the options and `path`. */
export type McpModuleForRootOptions = typeof MCP_OPTIONS_TYPE;
/** What `McpModule.forRootAsync` takes: `path`, and `useFactory` (with `inject` and `imports`), `useClass` or `useExisting`. */
export type McpModuleAsyncOptions = typeof MCP_ASYNC_OPTIONS_TYPE;
