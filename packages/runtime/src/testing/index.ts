// Anything exported here is public API of @openworker/runtime/testing.
export { ScriptedProvider, type ScriptStep } from "./scripted-provider.js";
