import { codeTool, type JsonSchema, type Tool } from "@openworker/tools-sdk";

export const OBJECT_SCHEMA: JsonSchema = { type: "object", properties: { text: { type: "string" } } };

/** A real native tool (the SDK's code tool) with the given name. */
export function nativeTool(name: string, version = "1.0.0", schema: JsonSchema = OBJECT_SCHEMA): Tool {
  return codeTool(name, `The ${name} tool.`, schema, () => ({ ok: { name } }), { version });
}

/** Re-exported from the SDK's testing kit under the names these tests use. */
export { captureError as thrown, captureRejection as rejected } from "@openworker/tools-sdk/testing";
