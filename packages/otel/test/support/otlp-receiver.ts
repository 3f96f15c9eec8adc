import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** One OTLP/HTTP request as it arrived: its path, content type and body text. */
export interface Received {
  readonly path: string;
  readonly contentType: string;
  readonly text: string;
}

/** An attribute value of OTLP JSON (`AnyValue`). */
type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

/** A span as the tests read it: OTLP JSON with attributes as a plain object. */
export interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, string | number | boolean>;
  readonly events: readonly { name: string; attributes: Record<string, string | number | boolean> }[];
  readonly status: { code?: number; message?: string };
}

/** One data point of a sum or histogram, with its attributes as a plain object. */
export interface ExportedPoint {
  readonly attributes: Record<string, string | number | boolean>;
  /** A sum's value, or a histogram's count. */
  readonly value: number;
}

/**
 * A stand-in OpenTelemetry collector: an HTTP server on 127.0.0.1 (port 0) that takes
 * OTLP/HTTP requests to `/v1/traces` and `/v1/metrics`, answers 200 with an empty
 * `Export*ServiceResponse`, and keeps each request's body.
 */
export class OtlpReceiver {
  readonly received: Received[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<OtlpReceiver> {
    const receiver: OtlpReceiver = new OtlpReceiver(
      createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
          const raw = Buffer.concat(chunks);
          const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
          receiver.received.push({ path: request.url ?? "", contentType: String(request.headers["content-type"] ?? ""), text: body.toString("utf8") });
          response.writeHead(200, { "content-type": "application/json" }).end("{}");
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.#server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Everything received, as one text: what a canary must not be found in. */
  get everything(): string {
    return this.received.map((request) => request.text).join("\n");
  }

  spans(): ExportedSpan[] {
    return this.#bodies("/v1/traces").flatMap((body) =>
      (body.resourceSpans ?? []).flatMap((resource: any) =>
        (resource.scopeSpans ?? []).flatMap((scope: any) =>
          (scope.spans ?? []).map((span: any): ExportedSpan => ({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            events: (span.events ?? []).map((event: any) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
            status: span.status ?? {},
          })),
        ),
      ),
    );
  }

  /** The data points of the latest export of metric `name` (the SDK's default is cumulative). */
  points(name: string): ExportedPoint[] {
    let latest: ExportedPoint[] = [];
    for (const body of this.#bodies("/v1/metrics")) {
      for (const resource of body.resourceMetrics ?? []) {
        for (const scope of resource.scopeMetrics ?? []) {
          for (const metric of scope.metrics ?? []) {
            if (metric.name !== name) continue;
            const points = metric.sum?.dataPoints ?? metric.histogram?.dataPoints ?? [];
            latest = points.map((point: any) => ({ attributes: attributesOf(point.attributes), value: Number(point.asInt ?? point.asDouble ?? point.count) }));
          }
        }
      }
    }
    return latest;
  }

  /** The unit of metric `name` as exported. */
  unit(name: string): string | undefined {
    for (const body of this.#bodies("/v1/metrics")) {
      for (const resource of body.resourceMetrics ?? []) {
        for (const scope of resource.scopeMetrics ?? []) {
          for (const metric of scope.metrics ?? []) if (metric.name === name) return metric.unit;
        }
      }
    }
    return undefined;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #bodies(path: string): any[] {
    return this.received.filter((request) => request.path === path).map((request) => JSON.parse(request.text));
  }
}

function attributesOf(list: readonly KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}
