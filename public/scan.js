// The scan progress page (/scans/{job_id}): moves the bar without a reload.
// A file, not inline, as the page's CSP allows no inline script. Reads
// /scans/{job_id}/progress (the page's own progress as JSON) every two
// seconds; when the scan ends it reloads the page once, which then shows
// the outcome (the report link, or the reason and a Retry button). Without
// JavaScript the page's <noscript> meta refresh reloads it instead.
(function () {
  "use strict";

  const box = document.getElementById("scan-progress");
  const bar = document.getElementById("scan-bar");
  const summary = document.getElementById("scan-summary");
  if (!box || !bar || !summary || box.dataset.state !== "running") return;
  const url = "/scans/" + encodeURIComponent(box.dataset.job) + "/progress";
  let failures = 0;

  async function poll() {
    try {
      const answer = await fetch(url, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      if (!answer.ok) throw new Error("HTTP " + answer.status);
      const progress = await answer.json();
      failures = 0;
      bar.max = Math.max(progress.total, 1);
      bar.value = progress.done;
      summary.textContent = progress.summary;
      if (progress.state !== "running") {
        window.location.reload();
        return;
      }
    } catch (_) {
      failures += 1;
      if (failures >= 5) {
        summary.textContent =
          "Lost touch with the server; reload the page to see the scan.";
        return;
      }
    }
    window.setTimeout(poll, 2000);
  }

  window.setTimeout(poll, 2000);
})();
