// The texts of @zmodu/core's errors.

export const OPTIONAL_PEER_MISSING_MESSAGE = (feature: string, packageName: string, install: string) =>
  `${feature} needs the ${packageName} package: npm install ${install}`;

export const OPTIONAL_PEER_BROKEN_MESSAGE = (feature: string, packageName: string, install: string, detail: string) =>
  `${feature} needs the ${packageName} package, which is installed but could not be loaded (${detail}): reinstall it (npm install ${install}).`;

export const DATA_SOURCE_MISSING_MESSAGE = (option: string, keeps: string, memoryOffered: boolean) =>
  `${option} is 'typeorm' (the default), which keeps ${keeps} in the application's database, and the application has no ` +
  `TypeORM DataSource: import TypeOrmModule.forRoot({ ..., migrations: zmoduMigrations(), migrationsRun: true }) ` +
  `(embeddedDataSourceOptions of @zmodu/db gives one on an embedded PostgreSQL that needs no server)` +
  (memoryOffered ? `, or set it to 'memory' (lost at restart), or to a store of your own.` : `, or set it to a store of your own.`);

export const MIGRATION_UNNAMED_MESSAGE = (what: string) =>
  `zmoduMigrations: ${what} is not a TypeORM migration class (a class whose name, or its \`name\` property, ends in a 13-digit timestamp)`;
