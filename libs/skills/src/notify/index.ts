export * from './notify.module';
