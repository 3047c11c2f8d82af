// The follow-the-money graph (/wallets/{address}/graph): draws the ECharts
// option the server built with charming (every hop kept on the page), and
// turns the expand form into a fetch: while it runs the button is disabled
// and says "Expanding…" and the form is aria-busy; the answer carries the
// whole kept graph, drawn in place of the old one. A refusal is shown as
// an error (class error, role alert), never in the green outcome line.
// Without this script (or without ECharts) the form still works: the POST
// answers the page with every kept hop. Every POST carries the CSRF token.
(function () {
  "use strict";
  const el = document.getElementById("graph");
  const data = document.getElementById("graph-option");
  if (!el || !data || typeof echarts === "undefined") return;
  const option = JSON.parse(data.textContent || "{}");
  const chart = echarts.init(el);
  chart.setOption(option);

  const form = document.getElementById("expand-form");
  if (!form) return;
  const nodeSelect = document.getElementById("expand-node");
  const button = form.querySelector("button[type=submit]");
  const idle = button ? button.textContent : "";
  const busy = (on) => {
    form.setAttribute("aria-busy", on ? "true" : "false");
    if (!button) return;
    button.disabled = on;
    button.textContent = on ? "Expanding…" : idle;
  };
  // One error line, above the form; cleared by the next success.
  const showError = (text) => {
    let p = document.getElementById("graph-error");
    if (!p) {
      p = document.createElement("p");
      p.id = "graph-error";
      p.className = "error";
      p.setAttribute("role", "alert");
      form.parentElement.insertBefore(p, form);
    }
    p.textContent = text;
    const ok = document.getElementById("graph-outcome");
    if (ok) ok.remove();
  };
  const clearError = () => {
    const p = document.getElementById("graph-error");
    if (p) p.remove();
  };
  const outcome = () => {
    let p = document.getElementById("graph-outcome");
    if (!p) {
      p = document.createElement("p");
      p.id = "graph-outcome";
      p.className = "notice";
      p.setAttribute("role", "status");
      form.parentElement.insertBefore(p, form);
    }
    return p;
  };

  // The tables under the chart gain the hop's new rows, as the page
  // without JavaScript would show them. Text only: nothing is parsed as HTML.
  const cell = (text, code) => {
    const td = document.createElement("td");
    if (code) {
      const c = document.createElement("code");
      c.textContent = text;
      td.appendChild(c);
    } else {
      td.textContent = text;
    }
    return td;
  };
  const bodyOf = (selector) => document.querySelector(selector + " tbody");
  const listed = (tbody, key) =>
    new Set([...tbody.rows].map((r) => key([...r.cells].map((c) => c.textContent))));
  const appendRows = (nodes, edges) => {
    const nodeBody = bodyOf("table.nodes");
    if (nodeBody && Array.isArray(nodes)) {
      const have = listed(nodeBody, (c) => c[0]);
      for (const n of nodes) {
        if (have.has(n.address)) continue;
        have.add(n.address);
        const tr = document.createElement("tr");
        tr.append(cell(n.address, true), cell(n.kind), cell(n.name), cell(n.category), cell(n.signals));
        const source = document.createElement("td");
        const [url, checked] = Array.isArray(n.citation) ? n.citation : [];
        if (typeof url === "string" && url.startsWith("https://")) {
          const a = document.createElement("a");
          a.href = url;
          a.rel = "external nofollow";
          a.textContent = url;
          source.append(a, " (checked " + checked + ")");
        }
        tr.appendChild(source);
        nodeBody.appendChild(tr);
      }
    }
    const edgeBody = bodyOf("table.edges");
    if (edgeBody && Array.isArray(edges)) {
      const key = (c) => c[0] + " " + c[1] + " " + c[2];
      const have = listed(edgeBody, key);
      for (const e of edges) {
        const k = e.source + " " + e.target + " " + e.mint;
        if (have.has(k)) continue;
        have.add(k);
        const tr = document.createElement("tr");
        tr.append(
          cell(e.source, true),
          cell(e.target, true),
          cell(e.mint, true),
          cell(e.amount),
          cell(e.usd),
          cell(String(e.legs)),
        );
        edgeBody.appendChild(tr);
      }
    }
  };

  // Clicking a node picks it for the next expansion.
  chart.on("click", (params) => {
    if (params.dataType !== "node" || !nodeSelect) return;
    if (![...nodeSelect.options].some((o) => o.value === params.data.id)) {
      nodeSelect.add(new Option(params.data.id, params.data.id));
    }
    nodeSelect.value = params.data.id;
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (form.getAttribute("aria-busy") === "true") return;
    const body = new URLSearchParams(new FormData(form));
    busy(true);
    let answer;
    try {
      const response = await fetch(form.action, {
        method: "POST",
        headers: { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
        body,
        credentials: "same-origin",
      });
      answer = await response.json();
      if (!response.ok) {
        showError(answer.message || "The expansion failed (" + (answer.code || response.status) + ").");
        return;
      }
    } catch (_) {
      showError("The expansion could not be sent; try again.");
      return;
    } finally {
      busy(false);
    }
    clearError();
    // The answer is the page's whole kept graph: drawn in place of the old.
    const listOf = (series, key) => (series && Array.isArray(series[key]) ? series[key] : []);
    const hop = answer.option && Array.isArray(answer.option.series) ? answer.option.series[0] : null;
    chart.setOption({ series: [{ data: listOf(hop, "data"), links: listOf(hop, "links") }] });
    for (const n of listOf(hop, "data")) {
      if (nodeSelect && ![...nodeSelect.options].some((o) => o.value === n.id)) {
        nodeSelect.add(new Option(n.id, n.id));
      }
    }
    appendRows(answer.nodes, answer.edges);
    outcome().textContent = answer.outcome + (answer.hub ? " " + answer.hub : "");
    const balance = document.getElementById("graph-balance");
    if (balance) balance.textContent = answer.balance_usd + " USD";
    // A new idempotency key for the next hop.
    form.querySelector("input[name=action_id]").value = answer.next_action_id;
  });
})();
