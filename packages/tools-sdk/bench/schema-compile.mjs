// Compile time of large input schemas, and the longest the event loop waited meanwhile.
// Prints figures; asserts nothing. Build first: pnpm --filter @openworker/tools-sdk build
//   node packages/tools-sdk/bench/schema-compile.mjs
import { monitorEventLoopDelay } from "node:perf_hooks";
import { compileInputSchema, SCHEMA_BOUNDS } from "../dist/internal/validation.js";

const values = (count, prefix = "value_") => Array.from({ length: count }, (_, index) => `${prefix}${index}`);
const objectOf = (properties, extra = {}) => ({ type: "object", properties, ...extra });
const propertiesOf = (names, schema) => Object.fromEntries(names.map((name) => [name, schema]));

const cases = [
  ...[10_000, 40_000, 100_000].map((count) => [`enum of ${count.toLocaleString("en-US")} values`, () => objectOf({ sku: { enum: values(count) } })]),
  ["enum of 100,000 values, one duplicate (refused)", () => objectOf({ sku: { enum: [...values(99_999), "value_0"] } })],
  ["enum of 1,000,000 values (refused)", () => objectOf({ sku: { enum: values(1_000_000) } })],
  [`${SCHEMA_BOUNDS.subschemas - 1} properties (at the bound)`, () => objectOf(propertiesOf(values(SCHEMA_BOUNDS.subschemas - 1), { type: "string" }))],
  ["500,000 properties (refused)", () => objectOf(propertiesOf(values(500_000), { type: "string" }))],
  ["31 anyOf of 127 consts (at the nesting bound)", () => objectOf(propertiesOf(values(31, "p"), { anyOf: values(127).map((value) => ({ const: value })) }))],
  ["anyOf of 10,000 consts (refused)", () => objectOf({ v: { anyOf: values(10_000).map((value) => ({ const: value })) } })],
  [
    `${SCHEMA_BOUNDS.patterns} patterns of 64 characters (at the bound)`,
    () => objectOf(propertiesOf(values(SCHEMA_BOUNDS.patterns), { type: "string", pattern: `^[a-z]{1,8}-${"x".repeat(50)}$` })),
  ],
  [
    "2,000 uses of one 2,000-property $ref target",
    () =>
      objectOf(propertiesOf(values(2_000, "use_"), { $ref: "#/definitions/big" }), {
        definitions: { big: objectOf(propertiesOf(values(2_000, "f_"), { type: "integer" })) },
      }),
  ],
];

let round = 0;
function measure(label, build) {
  const schema = build();
  // A distinct title each time: the compile cache never answers.
  schema.title = `bench ${round++}`;
  const bytes = JSON.stringify(schema).length;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  return new Promise((resolve) => {
    // Compile inside a timer, so the histogram sees the loop held for that long.
    setTimeout(() => {
      const started = performance.now();
      let outcome = "compiled";
      try {
        compileInputSchema(schema, "bench.tool");
      } catch (error) {
        outcome = `refused ${error.code}`;
      }
      const elapsed = performance.now() - started;
      setTimeout(() => {
        delay.disable();
        const maxDelayMs = delay.max / 1e6;
        console.log(
          `${label.padEnd(50)} ${(bytes / 1024).toFixed(0).padStart(7)} KiB  ${elapsed.toFixed(1).padStart(8)} ms  loop delay max ${maxDelayMs.toFixed(1).padStart(8)} ms  ${outcome}`,
        );
        resolve();
      }, 5);
    }, 5);
  });
}

// Warm the engines (meta-schemas compile once per engine).
compileInputSchema({ type: "object", properties: { a: { type: "string" } } }, "bench.warm");
for (const [label, build] of cases) await measure(label, build);
