#!/usr/bin/env node
// A stand-in OpenTelemetry collector for the bench, in its own process as a real one is:
// takes OTLP/HTTP (JSON) on 127.0.0.1, answers 200, and counts what it got. Tells its
// parent its URL, then answers each "count" message with the spans and requests so far.
import { createServer } from "node:http";

let spans = 0;
let requests = 0;
let bytes = 0;
const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    requests += 1;
    bytes += text.length;
    if (request.url === "/v1/traces") spans += text.split('"spanId":').length - 1;
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
server.listen(0, "127.0.0.1", () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
process.on("message", (message) => {
  if (message === "count") process.send({ spans, requests, bytes });
});
process.on("disconnect", () => process.exit(0));
