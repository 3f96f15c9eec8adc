import { OpenWorkerError, type JsonSchema, type ToolDescriptor } from "@openworker/tools-sdk";

/**
 * A deep-frozen copy of a checked descriptor with only its four fields. The schema
 * goes through JSON, so what is fingerprinted, compiled and shown to the model is
 * exactly the JSON the model sees (TypeBox's symbol keys and `undefined`s drop out),
 * and a tool cannot change its schema after registration.
 */
export function snapshotDescriptor(descriptor: ToolDescriptor): ToolDescriptor {
  let inputSchema: JsonSchema;
  try {
    inputSchema = JSON.parse(JSON.stringify(descriptor.inputSchema)) as JsonSchema;
  } catch (cause) {
    throw new OpenWorkerError(
      "DESCRIPTOR_INVALID",
      `tool ${JSON.stringify(descriptor.name)}: field "inputSchema" is not JSON (${(cause as Error).message})`,
      { cause, details: { name: descriptor.name } },
    );
  }
  return deepFreeze({
    name: descriptor.name,
    description: descriptor.description,
    inputSchema,
    version: descriptor.version,
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
