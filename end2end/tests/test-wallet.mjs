// The test wallet the browser suites sign in with: an ed25519 key held by
// the Node process and its base58 address (what a Solana wallet shows).
import { generateKeyPairSync, sign } from 'node:crypto';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
export function base58(bytes) {
  const digits = [0];
  for (const byte of bytes) {
    let carry = byte;
    for (let i = 0; i < digits.length; i++) {
      carry += digits[i] << 8;
      digits[i] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = '';
  for (const byte of bytes) {
    if (byte !== 0) break;
    out += '1';
  }
  for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i]];
  return out;
}

/** A test wallet: an ed25519 key and its base58 address. */
export function testWallet() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url');
  return { privateKey, address: base58(raw) };
}

/**
 * Give every page of a Playwright `context` the wallet as `window.solana`
 * (what Phantom, Solflare and Backpack provide): its `signMessage` signs
 * with the test wallet's key, held by this Node process, so the page signs
 * exactly as a wallet would and the server checks a real signature.
 */
export async function installWallet(context, wallet) {
  await context.exposeFunction('__ledgerTestSign', (bytes) =>
    Array.from(sign(null, Buffer.from(bytes), wallet.privateKey)),
  );
  await context.addInitScript((address) => {
    const publicKey = { toBase58: () => address, toString: () => address };
    window.solana = {
      isPhantom: true,
      publicKey,
      connect: async () => ({ publicKey }),
      signMessage: async (message) => ({
        signature: Uint8Array.from(await window.__ledgerTestSign(Array.from(message))),
        publicKey,
      }),
    };
  }, wallet.address);
}
