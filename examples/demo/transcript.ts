/**
 * The demo's transcript: numbered steps, indented lines, ✓/✗ checks and times in ms.
 * A failed check sets the exit code; it never throws, so the demo shows every step.
 */
let stepNumber = 0;
let stepStarted = 0;
let failures = 0;

/** Starts a numbered step. */
export function step(title: string): void {
  stepNumber += 1;
  stepStarted = performance.now();
  console.log(`\n${stepNumber}. ${title}`);
}

/** One line of the current step. */
export function say(text: string): void {
  console.log(`   ${text}`);
}

/** A line explaining why a step was skipped (a gateway the demo cannot control). */
export function skip(text: string): void {
  console.log(`   – skipped: ${text}`);
}

/** A check the demo depends on; a failure is printed and makes the demo exit 1. */
export function check(ok: boolean, what: string): void {
  console.log(`   ${ok ? '✓' : '✗'} ${what}`);
  if (!ok) failures += 1;
}

/** Milliseconds since the current step started. */
export function stepMs(): number {
  return Math.round(performance.now() - stepStarted);
}

/** Runs `work` and returns its result with how long it took, in whole ms. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: Math.round(performance.now() - started) };
}

/** How many checks failed so far. */
export function failedChecks(): number {
  return failures;
}

/** `RM 149.90`. */
export function ringgit(amount: number): string {
  return `RM ${amount.toFixed(2)}`;
}
