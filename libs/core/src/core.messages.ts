// The texts of @zmodu/core's errors.

export const OPTIONAL_PEER_MISSING_MESSAGE = (feature: string, packageName: string, install: string) =>
  `${feature} needs the ${packageName} package: npm install ${install}`;

export const OPTIONAL_PEER_BROKEN_MESSAGE = (feature: string, packageName: string, install: string, detail: string) =>
  `${feature} needs the ${packageName} package, which is installed but could not be loaded (${detail}): reinstall it (npm install ${install}).`;
