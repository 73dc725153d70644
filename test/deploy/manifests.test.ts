/**
 * The Kubernetes manifests in `deploy/kubernetes/`, validated offline against the Kubernetes API
 * schemas shipped in the `kubernetes-models` package, and checked against each other: the Service, the
 * autoscaler and the disruption budget point at the Deployment, the probes at the proxy's health
 * endpoints, the secret references at the Secret's keys.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const DIRECTORY = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url));

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: unknown };

function load(): Manifest[] {
  return readdirSync(DIRECTORY)
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((name) =>
      parseAllDocuments(readFileSync(`${DIRECTORY}${name}`, 'utf8')).map((document) => {
        expect(document.errors, name).toEqual([]);
        return document.toJS() as Manifest;
      }),
    );
}

/** Validates one manifest against its kind's schema; throws naming the offending field. */
function validate(manifest: Manifest): void {
  const key = `${manifest.apiVersion}/${manifest.kind}`;
  switch (key) {
    case 'apps/v1/Deployment':
      new Deployment(manifest).validate();
      return;
    case 'v1/Service':
      new Service(manifest).validate();
      return;
    case 'v1/Secret':
      new Secret(manifest).validate();
      return;
    case 'autoscaling/v2/HorizontalPodAutoscaler':
      new HorizontalPodAutoscaler(manifest).validate();
      return;
    case 'policy/v1/PodDisruptionBudget':
      new PodDisruptionBudget(manifest).validate();
      return;
    default:
      throw new Error(`no schema for ${key}`);
  }
}

describe('deploy/kubernetes', () => {
  const manifests = load();
  const byKind = (kind: string) => manifests.find((manifest) => manifest.kind === kind)!;

  it('has one of each expected kind, each valid against the Kubernetes schema', () => {
    expect(manifests.map((manifest) => manifest.kind).sort()).toEqual([
      'Deployment',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Secret',
      'Service',
    ]);
    for (const manifest of manifests) expect(() => validate(manifest), manifest.kind).not.toThrow();
  });

  it('would catch a manifest the API server would reject', () => {
    const broken = structuredClone(byKind('Deployment')) as Manifest & { spec: { replicas: unknown } };
    broken.spec.replicas = 'three';
    expect(() => validate(broken)).toThrow(/replicas/);
  });

  it('points the Service, autoscaler and disruption budget at the Deployment', () => {
    const deployment = byKind('Deployment') as unknown as {
      metadata: { name: string };
      spec: {
        selector: { matchLabels: Record<string, string> };
        template: { metadata: { labels: Record<string, string> } };
      };
    };
    const labels = deployment.spec.template.metadata.labels;
    expect(deployment.spec.selector.matchLabels).toEqual(labels);
    expect(
      (byKind('Service') as unknown as { spec: { selector: Record<string, string> } }).spec.selector,
    ).toEqual(labels);
    expect(
      (
        byKind('PodDisruptionBudget') as unknown as {
          spec: { selector: { matchLabels: Record<string, string> } };
        }
      ).spec.selector.matchLabels,
    ).toEqual(labels);
    expect(
      (
        byKind('HorizontalPodAutoscaler') as unknown as {
          spec: { scaleTargetRef: { kind: string; name: string } };
        }
      ).spec.scaleTargetRef,
    ).toMatchObject({ kind: 'Deployment', name: deployment.metadata.name });
  });

  it('probes readiness on /readyz and liveness on /healthz, and reads only keys the Secret has', () => {
    const container = (
      byKind('Deployment') as unknown as {
        spec: {
          template: {
            spec: {
              containers: {
                readinessProbe: { httpGet: { path: string } };
                livenessProbe: { httpGet: { path: string } };
                env: { name: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
              }[];
            };
          };
        };
      }
    ).spec.template.spec.containers[0]!;
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    const secret = byKind('Secret') as unknown as {
      metadata: { name: string };
      stringData: Record<string, string>;
    };
    const references = container.env.flatMap((entry) =>
      entry.valueFrom === undefined ? [] : [entry.valueFrom.secretKeyRef],
    );
    expect(references.length).toBeGreaterThan(0);
    for (const reference of references) {
      expect(reference.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData)).toContain(reference.key);
    }
  });
});
