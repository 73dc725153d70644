/**
 * The OpenTelemetry resource of a `tpx serve` process: its service name, a random `service.instance.id`
 * of its own, and whatever `OTEL_RESOURCE_ATTRIBUTES` / `OTEL_SERVICE_NAME` add (read by the SDK's
 * `envDetector`, which wins over both).
 *
 * Why the instance id: each process exports its own cumulative GenAI histograms — every worker of
 * `--workers`, every replica. Told apart by nothing but their resource, their series would be one series
 * with several writers to a collector or a Prometheus-style backend, each export overwriting the others'
 * counts. The semantic conventions suggest a random UUID. The SDK's own `serviceInstanceIdDetector` is
 * experimental and makes one id for the whole process whoever asks; here each SDK that `tracing.ts`
 * starts gets its own, so two started one after the other (a restart in-process, a test) never share one.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Resource } from '@opentelemetry/resources';

/** The resource of a process serving as `serviceName` (the SDK's resources module is loaded here). */
export async function serviceResource(serviceName: string): Promise<Resource> {
  const resources = await import('@opentelemetry/resources');
  return resources
    .resourceFromAttributes({ 'service.name': serviceName, 'service.instance.id': randomUUID() })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
}
