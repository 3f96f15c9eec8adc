// Anything exported here is public API of @openworker/sandbox.
export { bubblewrapLauncher, type BubblewrapLauncherOptions } from "./bubblewrap-launcher.js";
export { SANDBOX_ERROR_CODES } from "./codes.js";
