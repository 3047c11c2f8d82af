// The follow-the-money graph (/wallets/{address}/graph): draws the ECharts
// option the server built with charming, and turns the expand form into a
// fetch that merges each hop into the chart. Without this script (or
// without ECharts) the form still works: it answers the page with the
// hop's tables. Every POST carries the form's CSRF token.
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
    const body = new URLSearchParams(new FormData(form));
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
        outcome().textContent = (answer.code || "error") + ": " + (answer.message || "");
        return;
      }
    } catch (_) {
      outcome().textContent = "The expansion could not be sent; try again.";
      return;
    }
    // Merge the hop: nodes by id, links by (source, target). A series
    // without edges comes without `links` (charming leaves empty lists out).
    const current = chart.getOption().series[0];
    const hop = answer.option.series[0];
    const listOf = (series, key) => (series && Array.isArray(series[key]) ? series[key] : []);
    const held = listOf(current, "data");
    const have = new Set(held.map((n) => n.id));
    const nodes = held.concat(listOf(hop, "data").filter((n) => !have.has(n.id)));
    const seen = new Set(listOf(current, "links").map((l) => l.source + " " + l.target));
    const links = listOf(current, "links").concat(
      listOf(hop, "links").filter((l) => !seen.has(l.source + " " + l.target)),
    );
    chart.setOption({ series: [{ data: nodes, links }] });
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
