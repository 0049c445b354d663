/**
 * What no pacer that sends only into slots the service has freed can beat when the service counts
 * late (issue 33): a model, not a measurement. It reuses each slot the moment the service frees
 * it (its request's count plus the window), as if the pacer knew when the service counted every
 * request, which a client cannot know (a late count and a slow answer look the same from outside).
 * A pacer that also knew the service never counts sooner than `latencyMs` could send that much
 * before a slot frees; none is modelled, since nothing tells a client such a minimum. From cold it sends slow start's lone
 * request first and the others at its count (no round trip, no token fetch); each request is
 * counted `latencyMs` plus up to `jitterMs` (uniform) after it is sent, as the mock's
 * `rateLimitCountDelay` counts it. A burst ends when its last request is counted. Each slot's
 * requests wait for the counts of the ones before them, so the count delays add up along a slot:
 * the bench prints this bound beside the measured late-count bursts (bench/pacing.ts).
 *
 * @module
 */
import { seededRandom } from '../test/helpers/seeded-random.js';

/** The late-count scenario the model runs. */
export interface LateCountModel {
  calls: number;
  limit: number;
  windowMs: number;
  latencyMs: number;
  jitterMs: number;
  /** Bursts drawn (more: steadier quantiles). */
  bursts: number;
  /** The pseudo-random sequence's seed: the same seed, the same figures. */
  seed: number;
}

/** The model's bursts, in ms from the first send. */
export interface LateCountBound {
  medianMs: number;
  p10Ms: number;
  p90Ms: number;
  /** The share of bursts (0 to 1) that end within `withinMs`. */
  shareWithin: (withinMs: number) => number;
}

/** Draws `bursts` bursts of the model and answers their quantiles. */
export function lateCountBound(model: LateCountModel): LateCountBound {
  const random = seededRandom(model.seed); // the same bound each run
  const countDelay = () => model.latencyMs + random() * model.jitterMs;
  const ends: number[] = [];
  for (let b = 0; b < model.bursts; b++) {
    const loneCounted = countDelay();
    let end = 0;
    for (let slot = 0; slot < Math.min(model.limit, model.calls); slot++) {
      // Slow start: the lone request holds slot 0; the others are sent when it is counted.
      let counted = slot === 0 ? loneCounted : loneCounted + countDelay();
      for (let call = slot + model.limit; call < model.calls; call += model.limit)
        counted += model.windowMs + countDelay();
      end = Math.max(end, counted);
    }
    ends.push(end);
  }
  ends.sort((x, y) => x - y);
  const at = (q: number) => ends[Math.min(ends.length - 1, Math.floor(q * ends.length))] as number;
  return {
    medianMs: at(0.5),
    p10Ms: at(0.1),
    p90Ms: at(0.9),
    shareWithin: (withinMs) => ends.filter((x) => x <= withinMs).length / ends.length,
  };
}
