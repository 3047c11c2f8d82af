// A standard x402 client, unmodified: @x402/fetch (x402 v2, PAYMENT-REQUIRED /
// PAYMENT-SIGNATURE headers) with @x402/svm's exact scheme, paying one of
// Ledger's REST routes. The local-chain test runs it against surfpool:
//   node x402-standard-client.mjs <paid URL> <Solana RPC URL> <payer keyfile>
// It prints one JSON line: status, the decoded PAYMENT-RESPONSE and the body.
import { readFileSync } from "node:fs";
import { createKeyPairSignerFromBytes } from "@solana/kit";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";

const [url, rpcUrl, keyfile] = process.argv.slice(2);
const signer = await createKeyPairSignerFromBytes(
  new Uint8Array(JSON.parse(readFileSync(keyfile, "utf8"))),
);
const client = new x402Client();
// The documented way to point the scheme at a chosen RPC endpoint.
client.register("solana:*", new ExactSvmScheme(signer, { rpcUrl }));
const response = await wrapFetchWithPayment(fetch, client)(url);
const header = response.headers.get("PAYMENT-RESPONSE");
console.log(
  JSON.stringify({
    status: response.status,
    paymentResponse: header ? decodePaymentResponseHeader(header) : null,
    body: await response.json(),
  }),
);
