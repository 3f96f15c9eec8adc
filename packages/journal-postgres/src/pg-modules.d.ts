// pg's own modules, imported by path so a bundled host never references the optional native binding (pg-native) that pg's main
// entry can load; their types are those of the `pg` package.
declare module "pg/lib/client.js" {
  const Client: typeof import("pg").Client;
  export default Client;
}
declare module "pg/lib/type-overrides.js" {
  const TypeOverrides: new () => {
    setTypeParser(oid: number, parse: (value: string) => unknown): void;
    getTypeParser: typeof import("pg").types.getTypeParser;
  };
  export default TypeOverrides;
}
