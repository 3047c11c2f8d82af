// The portal's only script: Sign-In With Solana on /signin (a wallet must
// sign, which needs JavaScript) and the copy buttons of the Keys page.
// Everything else on the account pages is a plain form.
(function () {
  "use strict";

  // Copy buttons: hidden in the HTML, shown once this script can work them.
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const code = button.closest("figure")?.querySelector("pre code");
    if (!code || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(code.textContent);
        button.textContent = "Copied";
      } catch (_) {
        button.textContent = "Copy failed";
      }
    });
  }

  const signIn = document.getElementById("siws-button");
  if (!signIn) return;
  const status = document.getElementById("siws-status");
  const say = (text) => { if (status) status.textContent = text; };

  const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  function base58(bytes) {
    const digits = [0];
    for (const byte of bytes) {
      let carry = byte;
      for (let i = 0; i < digits.length; i++) {
        carry += digits[i] << 8;
        digits[i] = carry % 58;
        carry = (carry / 58) | 0;
      }
      while (carry) { digits.push(carry % 58); carry = (carry / 58) | 0; }
    }
    let out = "";
    for (const byte of bytes) { if (byte !== 0) break; out += "1"; }
    for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i]];
    return out;
  }

  // Phantom, Solflare, Backpack and most others inject `window.solana`
  // (some also under their own name).
  const wallet = () => window.solana || window.phantom?.solana || window.solflare || window.backpack;

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      credentials: "same-origin",
      body: JSON.stringify(body),
    });
    const json = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(json.message || `the server answered ${response.status}`);
    return json;
  }

  // Where to go once signed in: the same-origin path the page was opened
  // with (/signin?next=…, checked by the server's http::safe_next, which
  // also refuses encoded tricks), else the Wallets page.
  function nextPath(next) {
    const ok = typeof next === "string" && next.startsWith("/") && !next.startsWith("//")
      && !next.includes("\\") && !/[\u0000-\u001f]/.test(next);
    return ok ? next : "/wallets";
  }

  async function run() {
    const provider = wallet();
    if (!provider) { say("No Solana wallet found in this browser. Install one (Phantom, Solflare, Backpack) and reload."); return; }
    signIn.disabled = true;
    try {
      say("Connecting to your wallet…");
      if (!provider.publicKey && provider.connect) await provider.connect();
      const key = provider.publicKey;
      const address = typeof key === "string" ? key : key?.toBase58 ? key.toBase58() : String(key);
      const challenge = await post("/auth/solana/challenge", { address });
      say("Sign the message in your wallet…");
      const signed = await provider.signMessage(new TextEncoder().encode(challenge.message), "utf8");
      const raw = signed?.signature ?? signed;
      const signature = typeof raw === "string" ? raw : base58(Uint8Array.from(raw));
      await post("/auth/solana/verify", { message: challenge.message, signature });
      say("Signed in.");
      window.location.assign(nextPath(signIn.dataset.next));
    } catch (err) {
      say(`Sign-in failed: ${err.message || err}`);
      signIn.disabled = false;
    }
  }

  signIn.disabled = false;
  signIn.addEventListener("click", run);
})();
