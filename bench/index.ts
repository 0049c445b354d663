/**
 * `npm run bench`: the client bench, the webhook verification bench, the webhook store bench
 * (memory and Redis), the SQL ledger bench (against insert+commit on the same database) and its bytes per
 * handled payment, the pacing bench (burst drain time against the ideal, cold and warm, one
 * process and a fleet on Redis), the payouts bench (a drain against create in a loop; paced, against
 * the ideal), then the cold-import and bundle-size figures. This is a benchmark, not a
 * test: it prints figures (as ratios against baselines measured in the same run) and writes
 * bench/results/*.json; it fails only if a bench itself breaks.
 *
 * @module
 */
import { runClientBench } from './client.js';
import { runColdImportBench, runSizeReport } from './cold-import.js';
import { runLedgerBench } from './ledger.js';
import { runLedgerBytesBench } from './ledger-bytes.js';
import { runPacingBench } from './pacing.js';
import { runPayoutsBench } from './payouts.js';
import { runStoreBench } from './stores.js';
import { runWebhookBench } from './webhooks.js';

console.log('=== client bench (bench/client.ts) ===');
await runClientBench();
console.log('\n=== webhook verification bench (bench/webhooks.ts) ===');
await runWebhookBench();
console.log('\n=== webhook store bench (bench/stores.ts) ===');
await runStoreBench();
console.log('\n=== SQL ledger bench (bench/ledger.ts) ===');
await runLedgerBench();
console.log('\n=== SQL ledger: bytes per handled payment (bench/ledger-bytes.ts) ===');
await runLedgerBytesBench();
console.log('\n=== pacing bench (bench/pacing.ts) ===');
await runPacingBench();
console.log('\n=== payouts bench (bench/payouts.ts) ===');
await runPayoutsBench();
console.log('\n=== cold import and bundle size (bench/cold-import.ts) ===');
runColdImportBench();
await runSizeReport();
