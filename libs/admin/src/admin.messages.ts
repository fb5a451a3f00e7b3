export const CALLER_NOT_CHECKED_MESSAGE = () =>
  '@CurrentCaller() needs @RequireAdminPermission(...) on the endpoint or its controller: only a checked caller is handed out.';
